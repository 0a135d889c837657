package badinput

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/builtin/builtintest"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/external"
	"github.com/trainforge/trainforge/framework/remote"
	"github.com/trainforge/trainforge/framework/remote/remotetest"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/controller"
	"github.com/trainforge/trainforge/internal/operator"
	"github.com/trainforge/trainforge/internal/webhook"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
	"github.com/trainforge/trainforge/test/testenv"
)

// The code paths the rows go through. Each returns the message a user
// sees, with the paths of this test's temporary files replaced by the
// paths the doc shows: the configuration file is /etc/trainforge/config.yaml,
// the test plugin binary /plugins/faulty.

const (
	shownConfigDir = "/etc/trainforge"
	shownPluginDir = "/plugins"
)

// shown replaces the test's temporary paths, the sha256 of the test
// plugin (which changes with every build) and the machine's binary format
// by what the doc shows.
func shown(msg, configDir string) string {
	if configDir != "" {
		msg = strings.ReplaceAll(msg, configDir, shownConfigDir)
	}
	msg = strings.ReplaceAll(msg, binDir, shownPluginDir)
	if sum := faultySHA(); sum != "" {
		msg = strings.ReplaceAll(msg, sum, "<sha256 of the binary>")
	}
	// What the host says of the binary's format depends on the machine.
	return binaryFormat.ReplaceAllString(msg, "(the binary is <its format>, this host is <os/arch>)")
}

var binaryFormat = regexp.MustCompile(`\(the binary is [^,]*, this host is [^)]*\)`)

// realPaths makes a file's content use the test's real paths, and the
// test binary's real checksum.
func realPaths(s string) string {
	if sum := faultySHA(); sum != "" {
		s = strings.ReplaceAll(s, "<sha256 of the binary>", sum)
	}
	return strings.ReplaceAll(s, shownPluginDir+"/", binDir+"/")
}

func faultySHA() string {
	data, err := os.ReadFile(filepath.Join(binDir, "faulty"))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// configRow is a configuration file given to the controller: loaded,
// defaulted and validated, then its plugins created, configured and (when
// external) started, as trainforge-controller does at start-up.
func configRow(desc, file, want string) row {
	return row{
		Input:   desc + ": <pre>" + htmlEscape(file) + "</pre>",
		Message: want,
		got: func(t *testing.T) string {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(path, []byte(realPaths(file)), 0o600); err != nil {
				t.Fatal(err)
			}
			return shown(startConfig(t, path), dir)
		},
	}
}

func startConfig(t *testing.T, path string) string {
	registry := builtin.Registry()
	cfg, err := configv1alpha1.Load(path, registry.Has)
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := operator.NewPlugins(ctx, cfg, registry, logr.Discard())
	if err != nil {
		return err.Error()
	}
	// A plugin that does not start is retried in the background; what is
	// wrong shows in the controller's readiness and on the TrainJobs it
	// owns, as the framework reports it.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if err := p.Framework().Current().Ready(); err != nil && !strings.Contains(err.Error(), "starting") {
			return "not ready: " + err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the configuration was accepted and its plugins started")
	return ""
}

// hostRow starts a plugin binary as the plugin host does and returns why
// it is not running: the reason the host logs, shows in the controller's
// readiness and on the TrainJobs of the plugin.
func hostRow(desc string, opts external.Options, want string) row {
	return row{
		Input:   desc,
		Message: want,
		got: func(t *testing.T) string {
			opts = asConfigured(opts)
			opts.Command = realPaths(opts.Command)
			if opts.StartTimeout == 0 {
				opts.StartTimeout = 5 * time.Second
			}
			p, err := external.Start(context.Background(), opts)
			if err != nil {
				return shown(err.Error(), "")
			}
			defer p.Close()
			if err := p.Ready(); err == nil {
				t.Fatal("the plugin started")
			}
			return shown(p.Down(), "")
		},
	}
}

// asConfigured fills what opts leaves unset as the controller would: from
// a configuration entry after the configuration's defaulting.
func asConfigured(opts external.Options) external.Options {
	cfg := configv1alpha1.Defaulted(&configv1alpha1.Configuration{Plugins: []configv1alpha1.PluginConfig{
		{Name: opts.Name, External: &configv1alpha1.ExternalPlugin{Command: opts.Command}},
	}})
	defaults := external.OptionsFor(cfg, 0, logr.Discard())
	if opts.CallTimeout == 0 {
		opts.CallTimeout = defaults.CallTimeout
	}
	if opts.Backoff == (external.Backoff{}) {
		opts.Backoff = defaults.Backoff
	}
	if opts.MaxMessageBytes == 0 {
		opts.MaxMessageBytes = defaults.MaxMessageBytes
	}
	if opts.LogLinesPerSecond == 0 {
		opts.LogLinesPerSecond = defaults.LogLinesPerSecond
	}
	if opts.Env == nil {
		opts.Env = defaults.Env
	}
	return opts
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\n", "<br>").Replace(strings.TrimSuffix(s, "\n"))
}

// commandRow runs a command of bin/ and returns the last line it wrote to
// stderr, and its exit status.
func commandRow(desc, command string, args []string, want string) row {
	return row{
		Input:   desc + ": `" + strings.Join(append([]string{command}, args...), " ") + "`",
		Message: want,
		got: func(t *testing.T) string {
			real := make([]string, len(args))
			dir := t.TempDir()
			for i, a := range args {
				real[i] = strings.ReplaceAll(realPaths(a), shownConfigDir+"/", dir+"/")
			}
			prepareConfigDir(t, dir)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(binDir, command), real...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			out := stderr.String()
			if strings.TrimSpace(out) == "" {
				out = stdout.String()
			}
			return shown(lastLine(out), dir) + " (exit status " + strconv.Itoa(code) + ")"
		},
	}
}

// prepareConfigDir holds the files the command rows name under
// /etc/trainforge: a directory where a file is expected.
func prepareConfigDir(t *testing.T, dir string) {
	if err := os.Mkdir(filepath.Join(dir, "conf.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "case.yaml"), []byte("kind: TrainJob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// The manifests of the rows: runtimes that exist in the fake API server.
const runtimesYAML = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        replicas: 1
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers: [{name: node, image: pytorch/pytorch}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-elastic}
spec:
  mlPolicy:
    numNodes: 2
    torch:
      elasticPolicy: {minNodes: 2, maxNodes: 8}
  template:
    spec:
      replicatedJobs:
      - name: node
        replicas: 1
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers: [{name: node, image: pytorch/pytorch}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: deepspeed}
spec:
  mlPolicy: {deepspeed: {stage: 3}}
  template:
    spec:
      replicatedJobs:
      - name: node
        replicas: 1
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: deepspeed}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: no-trainer}
spec:
  template:
    spec:
      replicatedJobs:
      - name: prepare
        replicas: 1
        template:
          spec:
            template:
              spec:
                containers: [{name: a, image: busybox}, {name: b, image: busybox}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-hpa-bad}
spec:
  mlPolicy:
    numNodes: 2
    torch:
      elasticPolicy:
        minNodes: 2
        maxNodes: 8
        metrics: [{type: Resource, resource: {name: "", target: {type: Utilization, averageUtilization: 80}}}]
  template:
    spec:
      replicatedJobs:
      - name: node
        replicas: 1
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers: [{name: node, image: pytorch/pytorch}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: vendor}
spec:
  mlPolicy: {vendor: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        replicas: 1
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: vendor}]
`

func runtimes(t *testing.T) []client.Object {
	var out []client.Object
	for _, doc := range strings.Split(runtimesYAML, "\n---\n") {
		rt := &trainer.ClusterTrainingRuntime{}
		if err := yaml.UnmarshalStrict([]byte(doc), rt); err != nil {
			t.Fatal(err)
		}
		out = append(out, rt)
	}
	return out
}

func runtimeNamed(t *testing.T, name string) *trainer.ClusterTrainingRuntime {
	for _, o := range runtimes(t) {
		if o.GetName() == name {
			return o.(*trainer.ClusterTrainingRuntime)
		}
	}
	t.Fatalf("no runtime %s", name)
	return nil
}

func builtins(t *testing.T) *frameworkruntime.Framework {
	return builtintest.Framework(t, configv1alpha1.DefaultPlugins...)
}

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, trainer.AddToScheme, jobsetv1alpha2.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// decodeManifest decodes a manifest strictly, as the API server does
// with fieldValidation=Strict.
func decodeManifest(t *testing.T, manifest string, into any) {
	if err := yaml.UnmarshalStrict([]byte(manifest), into); err != nil {
		t.Fatalf("the row's manifest does not decode: %v", err)
	}
}

// trainJobRow is a TrainJob sent to the validating webhook (create), with
// the runtimes above in the cluster. A warning is shown as "warning: ...".
func trainJobRow(desc, manifest, want string) row {
	return row{
		Input:   desc + ": <pre>" + htmlEscape(manifest) + "</pre>",
		Message: want,
		got: func(t *testing.T) string {
			job := &trainer.TrainJob{}
			decodeManifest(t, manifest, job)
			c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(runtimes(t)...).Build()
			v := &webhook.TrainJobValidator{Client: c, Framework: builtins(t)}
			warnings, err := v.ValidateCreate(context.Background(), job)
			return answer(warnings, err)
		},
	}
}

func answer(warnings []string, err error) string {
	var parts []string
	for _, w := range warnings {
		parts = append(parts, "warning: "+w)
	}
	if err != nil {
		parts = append(parts, err.Error())
	}
	if len(parts) == 0 {
		return "accepted"
	}
	return strings.Join(parts, "; ")
}

// runtimeRow is a ClusterTrainingRuntime sent to its validating webhook.
func runtimeRow(desc, manifest, want string) row {
	return row{
		Input:   desc + ": <pre>" + htmlEscape(manifest) + "</pre>",
		Message: want,
		got: func(t *testing.T) string {
			rt := &trainer.ClusterTrainingRuntime{}
			decodeManifest(t, manifest, rt)
			v := &webhook.RuntimeValidator{Framework: builtins(t)}
			warnings, err := v.ValidateRuntime(context.Background(), rt)
			return answer(warnings, err)
		},
	}
}

// controllerRow is a TrainJob that reached the controller (created
// before its runtime changed, or with the webhook off): the reconciler
// runs once and the row shows its Created condition.
func controllerRow(desc, manifest string, objs func(t *testing.T) []client.Object, want string) row {
	return row{
		Input:   desc + ": <pre>" + htmlEscape(manifest) + "</pre>",
		Message: want,
		got: func(t *testing.T) string {
			job := &trainer.TrainJob{}
			decodeManifest(t, manifest, job)
			job.UID = types.UID("uid-" + job.Name)
			var initial []client.Object
			if objs != nil {
				initial = objs(t)
			}
			initial = append(initial, job)
			c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(initial...).WithStatusSubresource(&trainer.TrainJob{}).Build()
			r := &controller.TrainJobReconciler{Client: c, Framework: builtins(t), Recorder: events.NewFakeRecorder(20), Clock: clocktesting.NewFakePassiveClock(time.Now())}
			_, _ = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
			got := &trainer.TrainJob{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, trainer.TrainJobCreated)
			if cond == nil {
				return "no Created condition"
			}
			return string(cond.Type) + "=" + string(cond.Status) + " (" + cond.Reason + "): " + cond.Message
		},
	}
}

// answerRow is a plugin's answer as the host receives it: a fake plugin
// process, named Vendor, whose Describe is describe (or a valid one that
// owns mlPolicy.vendor and builds ConfigMaps) and whose answer at one point is
// the response given, run through remote.Client and the runner as a
// reconcile or an admission request runs them.
func answerRow(desc string, describe *pluginv1.DescribeResponse, point framework.ExtensionPoint, response any, want string) row {
	return row{
		Input:   desc,
		Message: want,
		got: func(t *testing.T) string {
			job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "job", UID: "uid-job"}}
			job.Spec.RuntimeRef.Name = "vendor"
			rt := runtimeNamed(t, "vendor")
			info, err := framework.NewInfo(job, &rt.Spec)
			if err != nil {
				t.Fatal(err)
			}
			return runAnswer(describe, point, response, remote.Limits{}, info, job)
		},
	}
}

// tableAnswerRows are the rows of the host's table of bad answers
// (framework/remote/remotetest), each fault in each answer format, run
// through the framework as a reconcile runs them, with the table's limits.
func tableAnswerRows() []row {
	table, err := remotetest.Load()
	if err != nil {
		panic(err)
	}
	var rows []row
	for i, r := range table.Rows {
		for _, format := range remotetest.Formats {
			a := r.Answers[format]
			point := remotetest.Points[format]
			want := a.Message
			switch {
			case want != "accepted" && format == "bad_value":
				// A Validate call that fails is an internal error of
				// the admission request.
				want = fmt.Sprintf("spec: Internal error: plugin Vendor, %s: %s", point, want)
			case want != "accepted":
				want = fmt.Sprintf("plugin Vendor, %s: %s", point, want)
			case format == "bad_value":
				want = fmt.Sprintf("spec.trainer: Invalid value: %s: bad", a.Shown())
			}
			doc := a.Shown()
			if a.Pad > 0 {
				doc = strings.Replace(a.Doc, "PAD", fmt.Sprintf("<%d x>", a.Pad), 1)
			}
			input := fmt.Sprintf("%s, in %s: %s", r.Name, remotetest.FormatNames[format], codeSpan(doc))
			if a.Message == "accepted" {
				input += " (" + acceptedBecause[format] + ")"
			}
			rows = append(rows, row{
				Input:   input,
				Message: want,
				got: func(t *testing.T) string {
					info, err := table.NewInfo()
					if err != nil {
						t.Fatal(err)
					}
					return runAnswer(remotetest.Describe("Vendor"), point, remotetest.Response(format, a), table.RemoteLimits(), info, remotetest.Job(i, format))
				},
			})
		}
	}
	return rows
}

// acceptedBecause says why a format takes what another refuses.
var acceptedBecause = map[string]string{
	"object":    "the host knows no built kind's fields: the API server checks them when the object is applied",
	"bad_value": "a bad value is any JSON value",
}

// codeSpan shows s as Markdown code, fenced so that backticks in it stay.
func codeSpan(s string) string {
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// runAnswer runs one point of a plugin Vendor that answers with response,
// through a Client within limits, as a reconcile (or an admission) runs
// it, and returns what the host says.
func runAnswer(describe *pluginv1.DescribeResponse, point framework.ExtensionPoint, response any, limits remote.Limits, info *framework.Info, job *trainer.TrainJob) string {
	rpc := &fakePlugin{describe: describe, response: response}
	if rpc.describe == nil {
		rpc.describe = vendorDescribe()
	}
	ctx := context.Background()
	p, err := remote.Dial(ctx, remote.NewClient(rpc, limits))
	if err != nil {
		return err.Error()
	}
	fw, err := frameworkruntime.New(ctx, framework.Registry{"Vendor": func(framework.Handle) framework.Plugin { return p }}, []frameworkruntime.PluginSpec{{Name: "Vendor"}})
	if err != nil {
		return err.Error()
	}
	plugins := fw.Current()
	switch point {
	case framework.PointValidate:
		warnings, errs := plugins.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job})
		return answer(warnings, errs.ToAggregate())
	case framework.PointWatch:
		_, _, err = plugins.WatchSources(ctx)
	default:
		err = runPoint(ctx, plugins, point, info, job)
	}
	if err == nil {
		return "accepted"
	}
	return err.Error()
}

// runPoint runs one phase of a reconcile for job, as the controller does.
func runPoint(ctx context.Context, plugins *frameworkruntime.PluginSet, point framework.ExtensionPoint, info *framework.Info, job *trainer.TrainJob) error {
	keys, err := info.PolicyKeys()
	if err != nil {
		return err
	}
	cycle, err := plugins.NewCycle(job, keys)
	if err != nil {
		return err
	}
	switch point {
	case framework.PointEnforceMLPolicy, framework.PointEnforcePodGroupPolicy:
		err = cycle.Enforce(ctx, info)
	case framework.PointBuild:
		_, err = cycle.Build(ctx, info)
	case framework.PointStatus:
		_, err = cycle.Status(ctx, info, func(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) { return nil, nil })
	}
	return err
}

func vendorDescribe() *pluginv1.DescribeResponse {
	return &pluginv1.DescribeResponse{
		Name:         "Vendor",
		MlPolicyKeys: []string{"vendor"},
		Points: []pluginv1.ExtensionPoint{
			pluginv1.ExtensionPoint_EXTENSION_POINT_VALIDATE,
			pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_ML_POLICY,
			pluginv1.ExtensionPoint_EXTENSION_POINT_BUILD,
			pluginv1.ExtensionPoint_EXTENSION_POINT_WATCH,
			pluginv1.ExtensionPoint_EXTENSION_POINT_STATUS,
		},
		Builds: []*pluginv1.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}},
	}
}

// fakePlugin answers Describe with describe and the point's method with
// response.
type fakePlugin struct {
	pluginv1.PluginServiceClient
	describe *pluginv1.DescribeResponse
	response any
}

func (f *fakePlugin) Describe(context.Context, *pluginv1.DescribeRequest, ...grpc.CallOption) (*pluginv1.DescribeResponse, error) {
	return f.describe, nil
}

func (f *fakePlugin) Configure(context.Context, *pluginv1.ConfigureRequest, ...grpc.CallOption) (*pluginv1.ConfigureResponse, error) {
	return &pluginv1.ConfigureResponse{}, nil
}

func (f *fakePlugin) Validate(context.Context, *pluginv1.ValidateRequest, ...grpc.CallOption) (*pluginv1.ValidateResponse, error) {
	r, _ := f.response.(*pluginv1.ValidateResponse)
	return orEmpty(r), nil
}

func (f *fakePlugin) EnforceMLPolicy(context.Context, *pluginv1.EnforceMLPolicyRequest, ...grpc.CallOption) (*pluginv1.EnforceMLPolicyResponse, error) {
	r, _ := f.response.(*pluginv1.EnforceMLPolicyResponse)
	return orEmpty(r), nil
}

func (f *fakePlugin) Build(context.Context, *pluginv1.BuildRequest, ...grpc.CallOption) (*pluginv1.BuildResponse, error) {
	r, _ := f.response.(*pluginv1.BuildResponse)
	return orEmpty(r), nil
}

func (f *fakePlugin) Watch(context.Context, *pluginv1.WatchRequest, ...grpc.CallOption) (*pluginv1.WatchResponse, error) {
	r, _ := f.response.(*pluginv1.WatchResponse)
	return orEmpty(r), nil
}

func (f *fakePlugin) Status(context.Context, *pluginv1.StatusRequest, ...grpc.CallOption) (*pluginv1.StatusResponse, error) {
	r, _ := f.response.(*pluginv1.StatusResponse)
	return orEmpty(r), nil
}

func orEmpty[T any](r *T) *T {
	if r == nil {
		return new(T)
	}
	return r
}

// jsonOf is compact JSON of a YAML or JSON literal, for answers.
func jsonOf(s string) []byte {
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		panic(err)
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		panic(err)
	}
	out, _ := json.Marshal(v)
	return out
}

// The API server of the apiServerRow and clusterRow rows, started once:
// kube-apiserver and etcd (testenv) with the CRDs and no webhooks, so that
// the answer is the CRD schema's.
var (
	apiServerOnce   sync.Once
	apiServerEnv    *testenv.Env
	apiServerClient client.Client
	apiServerErr    error
)

func apiServer(t *testing.T) client.Client {
	apiServerOnce.Do(func() {
		// Trainforge's CRDs, JobSet's and PodGroup's: the clusterRow rows
		// run the controller, which applies JobSets.
		var err error
		apiServerEnv, err = testenv.Start(testenv.Options{})
		if err != nil {
			apiServerErr = err
			return
		}
		apiServerClient, apiServerErr = client.New(apiServerEnv.Config, client.Options{Scheme: scheme(t)})
	})
	if apiServerErr != nil {
		t.Fatal(apiServerErr)
	}
	return apiServerClient
}

func stopAPIServer() {
	if apiServerEnv != nil {
		_ = apiServerEnv.Stop()
	}
}

// apiServerRow is a manifest created as kubectl creates it (field
// validation Strict) on an API server with the CRDs: what the schema
// refuses before any webhook sees the object.
func apiServerRow(desc, manifest, want string) row {
	return row{
		Input:   desc + ": <pre>" + htmlEscape(manifest) + "</pre>",
		Message: want,
		got: func(t *testing.T) string {
			c := apiServer(t)
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
				t.Fatal(err)
			}
			if obj.GetNamespace() != "" {
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: obj.GetNamespace()}}
				if err := c.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
			}
			err := c.Create(context.Background(), obj, client.FieldValidation("Strict"))
			if err == nil {
				_ = c.Delete(context.Background(), obj)
				return "accepted"
			}
			return err.Error()
		},
	}
}

// clusterRow is a TrainJob on the API server of apiServerRow, with the
// runtimes above (and runtime, when given) created there: the controller
// reconciles it until its status settles, as it does when the TrainJob is
// created (an elastic job gets its bounds in status.nodes), then resize,
// when given, changes its spec.trainer.numNodes. The message is the API
// server's answer to the resize, or else the TrainJob's Created condition.
// Each row has a namespace of its own, shown as team-a.
func clusterRow(desc, runtime, manifest string, resize *resizeStep, want string) row {
	input := desc + ": <pre>" + htmlEscape(manifest) + "</pre>"
	if runtime != "" {
		input = desc + ": <pre>" + htmlEscape(runtime) + "</pre>and<pre>" + htmlEscape(manifest) + "</pre>"
	}
	if resize != nil {
		input += "then " + resize.shown
	}
	return row{
		Input:   input,
		Message: want,
		got: func(t *testing.T) string {
			ctx := context.Background()
			c := apiServer(t)
			objs := runtimes(t)
			if runtime != "" {
				rt := &trainer.ClusterTrainingRuntime{}
				decodeManifest(t, runtime, rt)
				objs = append(objs, rt)
			}
			for _, o := range objs {
				if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
			}
			job := &trainer.TrainJob{}
			decodeManifest(t, manifest, job)
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: job.Namespace + "-"}}
			if err := c.Create(ctx, ns); err != nil {
				t.Fatal(err)
			}
			shownNS := job.Namespace
			job.Namespace = ns.Name
			if err := c.Create(ctx, job); err != nil {
				t.Fatalf("creating the TrainJob: %v", err)
			}
			r := &controller.TrainJobReconciler{Client: c, Framework: builtins(t), Recorder: events.NewFakeRecorder(100), Clock: clocktesting.NewFakePassiveClock(time.Now())}
			key := client.ObjectKeyFromObject(job)
			// Reconcile until the TrainJob stops changing, as the
			// controller would, unless the row is about a TrainJob it has
			// not reconciled yet.
			if resize == nil || !resize.unreconciled {
				for range 5 {
					before := &trainer.TrainJob{}
					if err := c.Get(ctx, key, before); err != nil {
						t.Fatal(err)
					}
					_, _ = r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
					after := &trainer.TrainJob{}
					if err := c.Get(ctx, key, after); err != nil {
						t.Fatal(err)
					}
					if after.ResourceVersion == before.ResourceVersion {
						break
					}
				}
			}
			shownMsg := func(s string) string { return strings.ReplaceAll(s, ns.Name, shownNS) }
			if resize != nil {
				if err := resize.run(ctx, c, key); err != nil {
					return shownMsg(err.Error())
				}
				return "accepted"
			}
			got := &trainer.TrainJob{}
			if err := c.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, trainer.TrainJobCreated)
			if cond == nil {
				return "no Created condition"
			}
			return shownMsg(string(cond.Type) + "=" + string(cond.Status) + " (" + cond.Reason + "): " + cond.Message)
		},
	}
}

// resizeStep changes a TrainJob's spec.trainer.numNodes as a user does.
type resizeStep struct {
	shown string
	run   func(ctx context.Context, c client.Client, key client.ObjectKey) error
	// unreconciled runs the step before the controller's first
	// reconcile, while the TrainJob has no status.
	unreconciled bool
}

// beforeReconcile is step run on a TrainJob the controller has not
// reconciled yet.
func beforeReconcile(step *resizeStep) *resizeStep {
	step.unreconciled = true
	step.shown += " before the controller's first reconcile"
	return step
}

// scaleTo resizes through the TrainJob's scale subresource, as `kubectl
// scale` and an autoscaler do.
func scaleTo(replicas int32) *resizeStep {
	return &resizeStep{
		shown: fmt.Sprintf("`kubectl scale trainjob/job --replicas=%d`", replicas),
		run: func(ctx context.Context, c client.Client, key client.ObjectKey) error {
			job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			scale := &autoscalingv1.Scale{}
			if err := c.SubResource("scale").Get(ctx, job, scale); err != nil {
				return err
			}
			scale.Spec.Replicas = replicas
			return c.SubResource("scale").Update(ctx, job, client.WithSubResourceBody(scale))
		},
	}
}

// editTo resizes by an update of the TrainJob, as `kubectl edit` and
// `kubectl apply` do.
func editTo(numNodes int32) *resizeStep {
	return &resizeStep{
		shown: fmt.Sprintf("`kubectl patch trainjob/job --type=merge -p '{\"spec\":{\"trainer\":{\"numNodes\":%d}}}'`", numNodes),
		run: func(ctx context.Context, c client.Client, key client.ObjectKey) error {
			job := &trainer.TrainJob{}
			if err := c.Get(ctx, key, job); err != nil {
				return err
			}
			patch := client.MergeFrom(job.DeepCopy())
			if job.Spec.Trainer == nil {
				job.Spec.Trainer = &trainer.Trainer{}
			}
			job.Spec.Trainer.NumNodes = &numNodes
			return c.Patch(ctx, job, patch)
		},
	}
}
