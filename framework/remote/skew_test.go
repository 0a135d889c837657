package remote

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// The tests of this file build plugins against an Info other than the
// host's, the way a plugin binary built with an older or a newer SDK (and
// k8s.io/api) has it, and serve them over gRPC with go-plugin, as the SDK
// does, answering through the SDK's own answer path (answerEnforce). The
// host is the real Client, or, for a host of protocol 1.0, the raw
// service and the 1.0 host's ApplyPatch.

// olderInfo is framework.Info as a plugin built against an older SDK has
// it: its PodSet lacks initContainers, podAnnotations and schedulerName;
// its Container lacks ports and resources; its EnvVar lacks valueFrom; its
// Volume knows only emptyDir, and its EmptyDirVolumeSource lacks sizeLimit.
type olderInfo struct {
	Version       string                  `json:"version"`
	Labels        map[string]string       `json:"labels,omitempty"`
	Annotations   map[string]string       `json:"annotations,omitempty"`
	RuntimePolicy framework.RuntimePolicy `json:"runtimePolicy"`
	PodSets       []olderPodSet           `json:"podSets"`
	Template      json.RawMessage         `json:"template,omitempty"`
}

type olderPodSet struct {
	Name         string           `json:"name"`
	AncestorStep string           `json:"ancestorStep,omitempty"`
	Replicas     int32            `json:"replicas"`
	Count        int32            `json:"count"`
	Containers   []olderContainer `json:"containers,omitempty"`
	Volumes      []olderVolume    `json:"volumes,omitempty"`
	Endpoints    []string         `json:"endpoints,omitempty"`
}

type olderContainer struct {
	Name         string               `json:"name"`
	Image        string               `json:"image,omitempty"`
	Command      []string             `json:"command,omitempty"`
	Args         []string             `json:"args,omitempty"`
	Env          []olderEnvVar        `json:"env,omitempty"`
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

type olderEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

type olderVolume struct {
	Name     string               `json:"name"`
	EmptyDir *olderEmptyDirSource `json:"emptyDir,omitempty"`
}

type olderEmptyDirSource struct {
	Medium corev1.StorageMedium `json:"medium,omitempty"`
}

// newerInfo is framework.Info as a plugin built against a newer SDK has
// it: its PodSet has priority, which the host's does not (with no
// omitempty, so the plugin always encodes it), and its Container has
// restartPolicy.
type newerInfo struct {
	Version       string                  `json:"version"`
	Labels        map[string]string       `json:"labels,omitempty"`
	Annotations   map[string]string       `json:"annotations,omitempty"`
	RuntimePolicy framework.RuntimePolicy `json:"runtimePolicy"`
	PodSets       []newerPodSet           `json:"podSets"`
	Template      json.RawMessage         `json:"template,omitempty"`
}

type newerPodSet struct {
	framework.PodSet
	// Containers hides the embedded PodSet's, as encoding/json resolves
	// names: the shallower field wins.
	Containers []newerContainer `json:"containers,omitempty"`
	Priority   int32            `json:"priority"`
}

type newerContainer struct {
	framework.Container
	RestartPolicy string `json:"restartPolicy,omitempty"`
}

// hostInfo is the host's Info, with a value in every field that olderInfo
// lacks.
func hostInfo() *framework.Info {
	return &framework.Info{
		Version:       framework.InfoVersion,
		Labels:        map[string]string{"team": "a", "remove-me": "x"},
		RuntimePolicy: framework.RuntimePolicy{MLPolicy: json.RawMessage(`{"numNodes":2,"skew":{}}`)},
		PodSets: []framework.PodSet{{
			Name: "node", AncestorStep: "trainer", Replicas: 1, Count: 2,
			InitContainers: []framework.Container{{Name: "init", Image: "busybox"}},
			Containers: []framework.Container{{
				Name:  "node",
				Image: "pytorch",
				Env: []corev1.EnvVar{
					{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "hf"}, Key: "token"}}},
					{Name: "DROP", Value: "1"},
					{Name: "KEEP", Value: "2"},
				},
				Ports:        []corev1.ContainerPort{{Name: "master", ContainerPort: 29500}},
				VolumeMounts: []corev1.VolumeMount{{Name: "shm", MountPath: "/dev/shm"}},
				Resources:    corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}},
			}},
			Volumes: []corev1.Volume{{
				Name:         "shm",
				VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Gi"))}},
			}},
			PodAnnotations: map[string]string{"kept": "yes"},
			SchedulerName:  "volcano",
		}},
		Template: json.RawMessage(`{"spec":{"replicatedJobs":[{"name":"node"}]}}`),
	}
}

// changeOlder is what the older plugin does: it puts a sidecar before the
// trainer container and an env var before the others, removes the env var
// DROP and the label remove-me (fields it knows), sets another env var,
// adds a volume and changes the count.
func changeOlder(info *olderInfo) error {
	ps := &info.PodSets[0]
	ps.Count = 3
	delete(info.Labels, "remove-me")
	c := ps.Containers[0]
	env := []olderEnvVar{{Name: "FIRST", Value: "0"}}
	for _, e := range c.Env {
		switch e.Name {
		case "DROP":
			continue
		case "KEEP":
			e.Value = "changed"
		}
		env = append(env, e)
	}
	c.Env = env
	ps.Containers = []olderContainer{{Name: "sidecar", Image: "proxy"}, c}
	ps.Volumes = append(ps.Volumes, olderVolume{Name: "scratch", EmptyDir: &olderEmptyDirSource{}})
	return nil
}

// wantAfterOlder is hostInfo after changeOlder, with every field the older
// plugin does not know as it was.
func wantAfterOlder() *framework.Info {
	want := hostInfo()
	delete(want.Labels, "remove-me")
	ps := &want.PodSets[0]
	ps.Count = 3
	c := ps.Containers[0]
	c.Env = []corev1.EnvVar{{Name: "FIRST", Value: "0"}, c.Env[0], {Name: "KEEP", Value: "changed"}}
	ps.Containers = []framework.Container{{Name: "sidecar", Image: "proxy"}, c}
	ps.Volumes = append(ps.Volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	return want
}

// answerFunc answers an EnforceMLPolicy request for a plugin whose Info
// is info, already decoded from the request: how an SDK answers.
type answerFunc func(info any, req *pluginv1.EnforceMLPolicyRequest, change func() error) (enforceAnswer, error)

// answerOfThisSDK is this SDK's answer path.
func answerOfThisSDK(info any, req *pluginv1.EnforceMLPolicyRequest, change func() error) (enforceAnswer, error) {
	return answerEnforce(info, req.GetInfo(), acceptedAnswers{info: req.GetAcceptsInfo(), infoChanges: req.GetAcceptsInfoChanges()}, change)
}

// skewPlugin serves EnforceMLPolicy for a plugin built against the Info
// type I.
type skewPlugin[I any] struct {
	pluginv1.UnimplementedPluginServiceServer
	change func(*I) error
	answer answerFunc
}

func (p *skewPlugin[I]) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	return &pluginv1.DescribeResponse{Name: "Skew", Points: []pluginv1.ExtensionPoint{pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_ML_POLICY}}, nil
}

func (p *skewPlugin[I]) EnforceMLPolicy(_ context.Context, req *pluginv1.EnforceMLPolicyRequest) (*pluginv1.EnforceMLPolicyResponse, error) {
	info := new(I)
	if err := json.Unmarshal(req.GetInfo(), info); err != nil {
		return nil, err
	}
	a, err := p.answer(info, req, func() error { return p.change(info) })
	if err != nil {
		return nil, err
	}
	return &pluginv1.EnforceMLPolicyResponse{Patch: a.patch, Info: a.info, InfoChanges: a.infoChanges}, nil
}

// servedPlugin registers a PluginServiceServer with go-plugin.
type servedPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	srv pluginv1.PluginServiceServer
}

func (p *servedPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterPluginServiceServer(s, p.srv)
	return nil
}

func (p *servedPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginv1.NewPluginServiceClient(c), nil
}

// serveSkew serves srv over gRPC and returns the plugin's service as the
// host reaches it.
func serveSkew(t *testing.T, srv pluginv1.PluginServiceServer) pluginv1.PluginServiceClient {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{PluginName: &servedPlugin{srv: srv}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(PluginName)
	if err != nil {
		t.Fatalf("Dispense: %v", err)
	}
	return raw.(pluginv1.PluginServiceClient)
}

// enforceThroughHost runs the plugin's EnforceMLPolicy on info through
// the host's Client.
func enforceThroughHost(t *testing.T, srv pluginv1.PluginServiceServer, info *framework.Info) error {
	t.Helper()
	c, err := describedClient(context.Background(), serveSkew(t, srv))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	return c.EnforceMLPolicy(context.Background(), info, skewJob())
}

func skewJob() *trainer.TrainJob {
	return &trainer.TrainJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "team-a"},
	}
}

func diffInfo(want, got *framework.Info) string {
	return cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }), cmp.Comparer(func(a, b json.RawMessage) bool {
		return jsonEqual(a, b)
	}))
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

// A plugin built against an older Info, served by this SDK, answers this
// host: the fields it does not know (at every depth, in list elements it
// moved and changed, Kubernetes types included) stay as they were, the
// fields it knows and removed are removed, its other changes apply.
func TestSkewOlderPluginKeepsNewerFields(t *testing.T) {
	info := hostInfo()
	srv := &skewPlugin[olderInfo]{change: changeOlder, answer: answerOfThisSDK}
	if err := enforceThroughHost(t, srv, info); err != nil {
		t.Fatalf("EnforceMLPolicy: %v", err)
	}
	if diff := diffInfo(wantAfterOlder(), info); diff != "" {
		t.Errorf("Info after the older plugin (-want +got):\n%s", diff)
	}
}

// A plugin built against a newer Info, served by this SDK, answers this
// host: a field the host does not know that the plugin leaves as it
// decoded it is no change, and the call succeeds; one it sets fails the
// call, with the field's path, and leaves Info as it was.
func TestSkewNewerPluginOnOlderHost(t *testing.T) {
	addEnv := func(info *newerInfo) {
		info.PodSets[0].Count = 3
		c := &info.PodSets[0].Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: "NEW", Value: "1"})
	}
	t.Run("leaves the field it alone knows", func(t *testing.T) {
		info := hostInfo()
		srv := &skewPlugin[newerInfo]{change: func(i *newerInfo) error { addEnv(i); return nil }, answer: answerOfThisSDK}
		if err := enforceThroughHost(t, srv, info); err != nil {
			t.Fatalf("EnforceMLPolicy: %v", err)
		}
		want := hostInfo()
		want.PodSets[0].Count = 3
		c := &want.PodSets[0].Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: "NEW", Value: "1"})
		if diff := diffInfo(want, info); diff != "" {
			t.Errorf("Info after the newer plugin (-want +got):\n%s", diff)
		}
	})
	t.Run("adds a PodSet with the field it alone knows empty", func(t *testing.T) {
		info := hostInfo()
		srv := &skewPlugin[newerInfo]{change: func(i *newerInfo) error {
			i.PodSets = append(i.PodSets, newerPodSet{PodSet: framework.PodSet{Name: "launcher", Replicas: 1, Count: 1}, Containers: []newerContainer{{Container: framework.Container{Name: "l"}}}})
			return nil
		}, answer: answerOfThisSDK}
		if err := enforceThroughHost(t, srv, info); err != nil {
			t.Fatalf("EnforceMLPolicy: %v", err)
		}
		want := hostInfo()
		want.PodSets = append(want.PodSets, framework.PodSet{Name: "launcher", Replicas: 1, Count: 1, Containers: []framework.Container{{Name: "l"}}})
		if diff := diffInfo(want, info); diff != "" {
			t.Errorf("Info after the newer plugin (-want +got):\n%s", diff)
		}
	})
	for _, tc := range []struct {
		name   string
		change func(*newerInfo)
		want   string
	}{
		{"sets a field of a PodSet", func(i *newerInfo) { i.PodSets[0].Priority = 5 }, `podSets[0]: this host's Info has no field "priority"`},
		{"sets a field of a container", func(i *newerInfo) { i.PodSets[0].Containers[0].RestartPolicy = "Always" }, `podSets[0].containers[0]: this host's Info has no field "restartPolicy"`},
		{"adds a container with it", func(i *newerInfo) {
			i.PodSets[0].Containers = append(i.PodSets[0].Containers, newerContainer{Container: framework.Container{Name: "side"}, RestartPolicy: "Always"})
		}, `podSets[0].containers[1]: unknown field "restartPolicy"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := hostInfo()
			srv := &skewPlugin[newerInfo]{change: func(i *newerInfo) error { addEnv(i); tc.change(i); return nil }, answer: answerOfThisSDK}
			err := enforceThroughHost(t, srv, info)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("EnforceMLPolicy error %v, want one containing %q", err, tc.want)
			}
			if diff := diffInfo(hostInfo(), info); diff != "" {
				t.Errorf("a refused answer changed Info (-want +got):\n%s", diff)
			}
		})
	}
}

// A host of protocol 1.0 sends no accepts_info and applies the answer as
// a JSON Patch to the Info it sent. A plugin of this SDK answers it with a
// patch that keeps what the plugin does not know, also when the plugin
// moves list elements; and a plugin with a newer Info works with it.
func TestSkewOldHostNewPlugin(t *testing.T) {
	enforceAsHost10 := func(t *testing.T, srv pluginv1.PluginServiceServer, info *framework.Info) error {
		t.Helper()
		sent, err := json.Marshal(info)
		if err != nil {
			t.Fatal(err)
		}
		job, err := json.Marshal(skewJob())
		if err != nil {
			t.Fatal(err)
		}
		resp, err := serveSkew(t, srv).EnforceMLPolicy(context.Background(), &pluginv1.EnforceMLPolicyRequest{Info: sent, TrainJob: job})
		if err != nil {
			t.Fatalf("EnforceMLPolicy: %v", err)
		}
		if len(resp.GetInfo()) > 0 {
			t.Fatalf("the plugin answered a 1.0 host with a whole Info: %s", resp.GetInfo())
		}
		return ApplyPatch(info, sent, resp.GetPatch())
	}
	t.Run("plugin with an older Info", func(t *testing.T) {
		info := hostInfo()
		if err := enforceAsHost10(t, &skewPlugin[olderInfo]{change: changeOlder, answer: answerOfThisSDK}, info); err != nil {
			t.Fatalf("applying the patch: %v", err)
		}
		if diff := diffInfo(wantAfterOlder(), info); diff != "" {
			t.Errorf("Info after the older plugin's patch (-want +got):\n%s", diff)
		}
	})
	t.Run("plugin with a newer Info", func(t *testing.T) {
		info := hostInfo()
		change := func(i *newerInfo) error {
			i.PodSets[0].Count = 3
			c := &i.PodSets[0].Containers[0]
			c.Env = append([]corev1.EnvVar{{Name: "FIRST", Value: "0"}}, c.Env...)
			return nil
		}
		if err := enforceAsHost10(t, &skewPlugin[newerInfo]{change: change, answer: answerOfThisSDK}, info); err != nil {
			t.Fatalf("applying the patch: %v", err)
		}
		want := hostInfo()
		want.PodSets[0].Count = 3
		c := &want.PodSets[0].Containers[0]
		c.Env = append([]corev1.EnvVar{{Name: "FIRST", Value: "0"}}, c.Env...)
		if diff := diffInfo(want, info); diff != "" {
			t.Errorf("Info after the newer plugin's patch (-want +got):\n%s", diff)
		}
	})
}

// answerOf11 answers as the SDK of protocol 1.1 did: the whole changed
// Info when the host accepts it, else a positional JSON Patch.
func answerOf11(info any, req *pluginv1.EnforceMLPolicyRequest, change func() error) (enforceAnswer, error) {
	before, err := json.Marshal(info)
	if err != nil {
		return enforceAnswer{}, err
	}
	if err := change(); err != nil {
		return enforceAnswer{}, err
	}
	after, err := json.Marshal(info)
	if err != nil {
		return enforceAnswer{}, err
	}
	if req.GetAcceptsInfo() {
		return enforceAnswer{info: after}, nil
	}
	patch, err := CreatePatch(before, after)
	return enforceAnswer{patch: patch}, err
}

// answerOf10 answers as a plugin of protocol 1.0: always a patch.
func answerOf10(info any, req *pluginv1.EnforceMLPolicyRequest, change func() error) (enforceAnswer, error) {
	req.AcceptsInfo = false
	return answerOf11(info, req, change)
}

// This host with plugins of the protocols before it, built against an
// older Info: they keep working, and the host keeps the fields they do not
// know. (A plugin before 1.2 diffs lists by position, so the change here
// only appends and changes in place, which position diffs keep right.)
func TestSkewOldPluginNewHost(t *testing.T) {
	change := func(info *olderInfo) error {
		ps := &info.PodSets[0]
		ps.Count = 3
		delete(info.Labels, "remove-me")
		c := &ps.Containers[0]
		c.Env[2].Value = "changed"
		c.Env = append(c.Env, olderEnvVar{Name: "LAST", Value: "9"})
		return nil
	}
	want := hostInfo()
	delete(want.Labels, "remove-me")
	want.PodSets[0].Count = 3
	c := &want.PodSets[0].Containers[0]
	c.Env[2].Value = "changed"
	c.Env = append(c.Env, corev1.EnvVar{Name: "LAST", Value: "9"})
	for _, tc := range []struct {
		protocol string
		answer   answerFunc
	}{{"1.0", answerOf10}, {"1.1", answerOf11}} {
		t.Run("protocol "+tc.protocol, func(t *testing.T) {
			info := hostInfo()
			if err := enforceThroughHost(t, &skewPlugin[olderInfo]{change: change, answer: tc.answer}, info); err != nil {
				t.Fatalf("EnforceMLPolicy: %v", err)
			}
			if diff := diffInfo(want, info); diff != "" {
				t.Errorf("Info after a %s plugin (-want +got):\n%s", tc.protocol, diff)
			}
		})
	}
}
