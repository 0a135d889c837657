//go:build !wasip1

package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// everyPoint is a plugin written as a plugin author writes one, with the
// SDK's helpers, implementing every extension point: what Serve serves.
type everyPoint struct{}

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func (everyPoint) Describe() framework.Description {
	return framework.Description{Name: "Every", MLPolicyKeys: []string{"*"}, PodGroupPolicyKeys: []string{"*"}, Builds: []schema.GroupVersionKind{configMapGVK}}
}

func (everyPoint) Configure(_ context.Context, args json.RawMessage) error {
	var a struct{ Greeting string }
	if len(args) == 0 {
		return nil
	}
	return json.Unmarshal(args, &a)
}

func (everyPoint) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	errs := req.TrainerErrors()
	errs = append(errs, framework.RejectReservedEnv(req.NewJob, "Every", "EVERY_RANK")...)
	return nil, errs, nil
}

func (everyPoint) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	ps, c, n, err := info.SetupTrainer(job)
	if err != nil {
		return err
	}
	c.UpsertEnv(corev1.EnvVar{Name: "EVERY_NODES", Value: fmt.Sprint(n)}, framework.CompletionIndexEnv("EVERY_RANK"))
	c.UpsertPort(corev1.ContainerPort{Name: "every", ContainerPort: 1234})
	ps.UpsertVolume(corev1.Volume{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	c.UpsertVolumeMount(corev1.VolumeMount{Name: "shm", MountPath: "/dev/shm"})
	framework.MergeTrainerEnv(c, job)
	_ = framework.GPUCount(c.Resources)
	if _, err := ps.FirstEndpoint(); err != nil {
		return nil // no endpoints before RefreshDerived: fine
	}
	return nil
}

func (everyPoint) EnforcePodGroupPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	gang, err := info.Gang()
	if err != nil {
		return err
	}
	size, _, err := framework.GangSize(gang)
	if err != nil {
		return err
	}
	for _, ps := range gang {
		framework.MergeMap(&ps.PodLabels, map[string]string{"every/gang": fmt.Sprint(size)})
	}
	return nil
}

func (everyPoint) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	if _, err := info.RuntimeContainer("node", "node"); err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-every"}, Data: map[string]string{"job": job.Name}}
	obj, err := framework.ToObject(info, cm, configMapGVK)
	if err != nil {
		return nil, err
	}
	return []framework.Object{framework.CreateOnce(obj)}, nil
}

func (everyPoint) Watch(context.Context) ([]framework.WatchSource, error) {
	return []framework.WatchSource{{Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Mapping: framework.MapByLabel, Label: "every/job"}}, nil
}

func (everyPoint) Status(_ context.Context, _ *framework.Info, job *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	st := &framework.StatusReport{}
	for _, o := range owned {
		st.Conditions = append(st.Conditions, metav1.Condition{Type: "Seen", Status: metav1.ConditionTrue, Reason: "Owned", Message: o.GetKind() + " " + o.GetName()})
	}
	return st, nil
}

// Request kinds of FuzzServeRequest.
const (
	requestDescribe = iota
	requestConfigure
	requestValidate
	requestEnforceML
	requestEnforcePG
	requestBuild
	requestWatch
	requestStatus
	requestKinds
)

// FuzzServeRequest is what a host could send a served plugin: arbitrary
// protobuf bytes as the request of each method, and arbitrary JSON in the
// fields that carry JSON (Info, the TrainJobs, owned objects, args). The
// server adapter Serve registers (remote.Server) decodes them and calls a
// plugin that uses the SDK's helpers. Nothing may panic the plugin, and
// every failure is a gRPC status, as the host expects.
func FuzzServeRequest(f *testing.F) {
	info, err := json.Marshal(fuzzInfo())
	if err != nil {
		f.Fatal(err)
	}
	job := []byte(`{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"job","namespace":"ns","uid":"u"},"spec":{"runtimeRef":{"name":"torch"},"trainer":{"numNodes":2,"env":[{"name":"A","value":"1"}]}}}`)
	cm := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"job-every","namespace":"ns"}}`)
	for _, s := range []struct {
		kind               int
		message            proto.Message
		info, job, payload []byte
	}{
		{requestDescribe, &pluginv1.DescribeRequest{}, nil, nil, nil},
		{requestConfigure, &pluginv1.ConfigureRequest{}, nil, nil, []byte(`{"greeting":"hi"}`)},
		{requestConfigure, &pluginv1.ConfigureRequest{}, nil, nil, []byte(`[1]`)},
		{requestValidate, &pluginv1.ValidateRequest{}, info, job, job},
		{requestValidate, &pluginv1.ValidateRequest{}, []byte(`{"version":"v0"}`), job, nil},
		{requestEnforceML, &pluginv1.EnforceMLPolicyRequest{AcceptsInfo: true}, info, job, nil},
		{requestEnforceML, &pluginv1.EnforceMLPolicyRequest{}, info, job, nil},
		{requestEnforcePG, &pluginv1.EnforcePodGroupPolicyRequest{}, info, job, nil},
		{requestEnforcePG, &pluginv1.EnforcePodGroupPolicyRequest{}, []byte(`{"version":"v1","podSets":[{"name":"node","ancestorStep":"trainer","count":-1}]}`), job, nil},
		{requestBuild, &pluginv1.BuildRequest{}, info, job, nil},
		{requestBuild, &pluginv1.BuildRequest{}, []byte(`{"version":"v1","podSets":[],"template":"x"}`), []byte(`{"metadata":{"name":7}}`), nil},
		{requestWatch, &pluginv1.WatchRequest{}, nil, nil, nil},
		{requestStatus, &pluginv1.StatusRequest{}, nil, job, cm},
		{requestStatus, &pluginv1.StatusRequest{}, nil, job, []byte(`{"kind":5}`)},
	} {
		msg, err := proto.Marshal(s.message)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(s.kind), msg, s.info, s.job, s.payload)
	}
	srv := remote.NewServer(everyPoint{})
	f.Fuzz(func(t *testing.T, kind uint8, message, info, job, payload []byte) {
		ctx := context.Background()
		var err error
		switch int(kind) % requestKinds {
		case requestDescribe:
			req := &pluginv1.DescribeRequest{}
			if proto.Unmarshal(message, req) != nil {
				return
			}
			_, err = srv.Describe(ctx, req)
		case requestConfigure:
			req := &pluginv1.ConfigureRequest{}
			if proto.Unmarshal(message, req) != nil {
				return
			}
			if payload != nil {
				req.Args = payload
			}
			_, err = srv.Configure(ctx, req)
		case requestValidate:
			req := &pluginv1.ValidateRequest{}
			if proto.Unmarshal(message, req) != nil {
				return
			}
			set(&req.Info, info)
			set(&req.NewTrainJob, job)
			set(&req.OldTrainJob, payload)
			_, err = srv.Validate(ctx, req)
		case requestEnforceML:
			req := &pluginv1.EnforceMLPolicyRequest{}
			if proto.Unmarshal(message, req) != nil {
				return
			}
			set(&req.Info, info)
			set(&req.TrainJob, job)
			_, err = srv.EnforceMLPolicy(ctx, req)
		case requestEnforcePG:
			req := &pluginv1.EnforcePodGroupPolicyRequest{}
			if proto.Unmarshal(message, req) != nil {
				return
			}
			set(&req.Info, info)
			set(&req.TrainJob, job)
			_, err = srv.EnforcePodGroupPolicy(ctx, req)
		case requestBuild:
			req := &pluginv1.BuildRequest{}
			if proto.Unmarshal(message, req) != nil {
				return
			}
			set(&req.Info, info)
			set(&req.TrainJob, job)
			_, err = srv.Build(ctx, req)
		case requestWatch:
			req := &pluginv1.WatchRequest{}
			if proto.Unmarshal(message, req) != nil {
				return
			}
			_, err = srv.Watch(ctx, req)
		case requestStatus:
			req := &pluginv1.StatusRequest{}
			if proto.Unmarshal(message, req) != nil {
				return
			}
			set(&req.TrainJob, job)
			if payload != nil {
				req.Owned = append(req.Owned, payload)
			}
			_, err = srv.Status(ctx, req)
		}
		if err != nil {
			if _, ok := status.FromError(err); !ok {
				t.Fatalf("a failure that is not a gRPC status: %T %v", err, err)
			}
		}
	})
}

// set replaces a request's JSON field with the fuzzed bytes, when given.
func set(field *[]byte, data []byte) {
	if data != nil {
		*field = data
	}
}

// fuzzInfo is the Info of a one-node Torch-like runtime, with its template.
func fuzzInfo() *framework.Info {
	return &framework.Info{
		Version:       framework.InfoVersion,
		Labels:        map[string]string{"team": "a"},
		RuntimePolicy: framework.RuntimePolicy{MLPolicy: json.RawMessage(`{"numNodes":2,"torch":{}}`)},
		PodSets: []framework.PodSet{{
			Name:         "node",
			AncestorStep: trainer.TrainerStep,
			Replicas:     1,
			Count:        2,
			Containers: []framework.Container{{
				Name:  "node",
				Image: "pytorch/pytorch",
				Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}},
			}},
			Endpoints: []string{"job-node-0-0.job", "job-node-0-1.job"},
		}},
		Template: json.RawMessage(`{"spec":{"replicatedJobs":[{"name":"node","replicas":1,"template":{"spec":{"template":{"spec":{"containers":[{"name":"node","image":"pytorch/pytorch"}]}}}}}]}}`),
	}
}
