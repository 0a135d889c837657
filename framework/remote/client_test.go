package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/internal/testfixture"
	"github.com/trainforge/trainforge/framework/remote"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/framework/runtime/runtimetest"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// A Plugin is supervised as a plugin process is; the assertion lives here
// so that the package links no runtime.
var _ frameworkruntime.Supervised = (*remote.Plugin)(nil)

var (
	jobSetGVK   = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}
	podGroupGVK = schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}
	secretGVK   = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	podGVK      = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
)

// fullPlugin implements every extension point. What it was given is
// recorded under mu: the gRPC server calls it on its own goroutines.
type fullPlugin struct {
	desc framework.Description

	// What the plugin does.
	configureErr error
	warnings     []string
	fieldErrs    field.ErrorList
	enforceML    func(*framework.Info, *trainer.TrainJob) error
	enforcePG    func(*framework.Info, *trainer.TrainJob) error
	objects      []*unstructured.Unstructured
	buildErr     error
	sources      []framework.WatchSource
	watchErr     error
	status       *framework.StatusReport
	statusErr    error

	mu          sync.Mutex
	gotArgs     json.RawMessage
	configured  bool
	gotOld      *trainer.TrainJob
	gotNew      *trainer.TrainJob
	gotInfo     *framework.Info
	gotOwned    []*unstructured.Unstructured
	gotStatusOf *trainer.TrainJob
}

var (
	_ framework.Configurable           = (*fullPlugin)(nil)
	_ framework.Validator              = (*fullPlugin)(nil)
	_ framework.MLPolicyEnforcer       = (*fullPlugin)(nil)
	_ framework.PodGroupPolicyEnforcer = (*fullPlugin)(nil)
	_ framework.Builder                = (*fullPlugin)(nil)
	_ framework.Watcher                = (*fullPlugin)(nil)
	_ framework.StatusReporter         = (*fullPlugin)(nil)
)

func (p *fullPlugin) Describe() framework.Description { return p.desc }

func (p *fullPlugin) Configure(_ context.Context, args json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.configured, p.gotArgs = true, args
	return p.configureErr
}

func (p *fullPlugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	info, oldJob, newJob := req.Info, req.OldJob, req.NewJob
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gotInfo, p.gotOld, p.gotNew = info, oldJob, newJob
	return p.warnings, p.fieldErrs, nil
}

func (p *fullPlugin) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	if p.enforceML == nil {
		return nil
	}
	return p.enforceML(info, job)
}

func (p *fullPlugin) EnforcePodGroupPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	if p.enforcePG == nil {
		return nil
	}
	return p.enforcePG(info, job)
}

func (p *fullPlugin) Build(_ context.Context, info *framework.Info, _ *trainer.TrainJob) ([]framework.Object, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gotInfo = info
	return framework.Apply(p.objects...), p.buildErr
}

func (p *fullPlugin) Watch(context.Context) ([]framework.WatchSource, error) {
	return p.sources, p.watchErr
}

func (p *fullPlugin) Status(_ context.Context, _ *framework.Info, job *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gotStatusOf, p.gotOwned = job, owned
	return p.status, p.statusErr
}

// buildOnly implements Build and nothing else.
type buildOnly struct {
	desc    framework.Description
	objects []*unstructured.Unstructured
}

func (p *buildOnly) Describe() framework.Description { return p.desc }

func (p *buildOnly) Build(context.Context, *framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
	return framework.Apply(p.objects...), nil
}

// connect serves impl through go-plugin's gRPC path in process and returns
// the raw PluginService client.
func connect(t *testing.T, impl framework.Plugin) pluginv1.PluginServiceClient {
	t.Helper()
	// Closing the client shuts the server down through go-plugin's
	// controller service; stopping it here as well would race with that.
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{remote.PluginName: &remote.GRPCPlugin{Impl: impl}})
	t.Cleanup(func() { _ = client.Close() })
	return pluginv1.NewPluginServiceClient(client.Conn)
}

// TestDispenseReturnsTheClient: what go-plugin's Dispense hands out is
// the protocol's adapter, as GRPCPlugin.GRPCClient says, and the plugin
// describes itself through it.
func TestDispenseReturnsTheClient(t *testing.T) {
	impl := &buildOnly{desc: framework.Description{Name: "B", Builds: []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}}}}
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{remote.PluginName: &remote.GRPCPlugin{Impl: impl}})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(remote.PluginName)
	if err != nil {
		t.Fatalf("Dispense: %v", err)
	}
	c, ok := raw.(*remote.Client)
	if !ok {
		t.Fatalf("Dispense returned %T, want a *remote.Client", raw)
	}
	d, points, err := c.Describe(context.Background())
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	want := framework.Description{Name: "B", Builds: impl.desc.Builds}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]framework.ExtensionPoint{framework.PointBuild}, points); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
}

// dial serves impl and returns the host's Client of it, once the plugin
// has described itself.
func dial(t *testing.T, impl framework.Plugin) *remote.Client {
	t.Helper()
	c := remote.NewClient(connect(t, impl), remote.Limits{})
	if _, _, err := c.Describe(context.Background()); err != nil {
		t.Fatalf("Describe: %v", err)
	}
	return c
}

// dialPlugin serves impl and returns it as the framework takes a plugin
// behind the protocol.
func dialPlugin(t *testing.T, impl framework.Plugin) *remote.Plugin {
	t.Helper()
	p, err := remote.Dial(context.Background(), remote.NewClient(connect(t, impl), remote.Limits{}))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	return p
}

func testJob() *trainer.TrainJob {
	return &trainer.TrainJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "team-a", UID: types.UID("uid-1234")},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: "torch"},
			Trainer:    &trainer.Trainer{NumNodes: ptr.To[int32](2)},
		},
	}
}

func object(gvk schema.GroupVersionKind, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	return u
}

var allPoints = []framework.ExtensionPoint{
	framework.PointConfigure, framework.PointValidate, framework.PointEnforceMLPolicy, framework.PointEnforcePodGroupPolicy,
	framework.PointBuild, framework.PointWatch, framework.PointStatus,
}

func TestDescribeRoundTrip(t *testing.T) {
	cases := []struct {
		name       string
		plugin     framework.Plugin
		want       framework.Description
		wantPoints []framework.ExtensionPoint
	}{
		{
			name: "every point",
			plugin: &fullPlugin{desc: framework.Description{
				Name:               "Torch",
				Version:            "v1.2.3",
				MLPolicyKeys:       []string{"torch", framework.NoPolicyKey},
				PodGroupPolicyKeys: []string{framework.AnyPolicyKey},
				Builds:             []schema.GroupVersionKind{jobSetGVK, secretGVK},
			}},
			want: framework.Description{
				Name:               "Torch",
				Version:            "v1.2.3",
				MLPolicyKeys:       []string{"torch", framework.NoPolicyKey},
				PodGroupPolicyKeys: []string{framework.AnyPolicyKey},
				Builds:             []schema.GroupVersionKind{jobSetGVK, secretGVK},
			},
			wantPoints: allPoints,
		},
		{
			name:   "Build only",
			plugin: &buildOnly{desc: framework.Description{Name: "B", Builds: []schema.GroupVersionKind{podGroupGVK}}},
			want: framework.Description{
				Name:   "B",
				Builds: []schema.GroupVersionKind{podGroupGVK},
			},
			wantPoints: []framework.ExtensionPoint{framework.PointBuild},
		},
		{
			name:   "no point at all",
			plugin: &ownerOnly{desc: framework.Description{Name: "Owner", MLPolicyKeys: []string{"jax"}}},
			want:   framework.Description{Name: "Owner", MLPolicyKeys: []string{"jax"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, points, err := dial(t, tc.plugin).Describe(context.Background())
			if err != nil {
				t.Fatalf("Describe: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Describe (-want +got):\n%s", diff)
			}
			// The points are those of the served plugin's type.
			if diff := cmp.Diff(tc.wantPoints, points, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("points (-want +got):\n%s", diff)
			}
		})
	}
}

// ownerOnly implements no point: it only owns keys.
type ownerOnly struct{ desc framework.Description }

func (p *ownerOnly) Describe() framework.Description { return p.desc }

func TestDialRefusesANamelessPlugin(t *testing.T) {
	_, _, err := remote.NewClient(connect(t, &ownerOnly{}), remote.Limits{}).Describe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no name") {
		t.Errorf("Dial error = %v, want one saying the plugin gave no name", err)
	}
}

func TestUnimplementedPoints(t *testing.T) {
	c := dial(t, &buildOnly{desc: framework.Description{Name: "B"}})
	ctx := context.Background()
	info, job := testInfo(), testJob()
	cases := []struct {
		name string
		call func() error
	}{
		{name: "Validate", call: func() error {
			_, _, err := c.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job})
			return err
		}},
		{name: "EnforceMLPolicy", call: func() error { return c.EnforceMLPolicy(ctx, info, job) }},
		{name: "EnforcePodGroupPolicy", call: func() error { return c.EnforcePodGroupPolicy(ctx, info, job) }},
		{name: "Watch", call: func() error { _, err := c.Watch(ctx); return err }},
		{name: "Status", call: func() error { _, err := c.Status(ctx, nil, job, nil); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var ce *remote.CallError
			if !errors.As(err, &ce) || ce.Code != codes.Unimplemented {
				t.Fatalf("error %v (%T), want a *CallError with code Unimplemented", err, err)
			}
			if !strings.Contains(err.Error(), "does not implement") {
				t.Errorf("error %q does not say that the plugin does not implement the point", err)
			}
			if strings.Contains(err.Error(), "rpc error") {
				t.Errorf("error %q shows the gRPC status", err)
			}
		})
	}
	if diff := cmp.Diff(testInfo(), info); diff != "" {
		t.Errorf("Info changed by unimplemented Enforce calls (-want +got):\n%s", diff)
	}
}

func TestConfigure(t *testing.T) {
	cases := []struct {
		name     string
		plugin   framework.Plugin
		args     json.RawMessage
		wantErr  string // the whole error text; empty means success
		wantArgs json.RawMessage
	}{
		{
			name:     "args reach the plugin",
			plugin:   &fullPlugin{desc: framework.Description{Name: "P"}},
			args:     json.RawMessage(`{"scheduleTimeoutSeconds":60}`),
			wantArgs: json.RawMessage(`{"scheduleTimeoutSeconds":60}`),
		},
		{
			name:   "no args reach the plugin as nil",
			plugin: &fullPlugin{desc: framework.Description{Name: "P"}},
		},
		{
			name:     "the plugin's rejection, as it wrote it",
			plugin:   &fullPlugin{desc: framework.Description{Name: "P"}, configureErr: errors.New("scheduleTimeoutSeconds must be positive")},
			args:     json.RawMessage(`{"scheduleTimeoutSeconds":-1}`),
			wantErr:  "scheduleTimeoutSeconds must be positive",
			wantArgs: json.RawMessage(`{"scheduleTimeoutSeconds":-1}`),
		},
		{
			name:    "a plugin without Configure rejects args",
			plugin:  &buildOnly{desc: framework.Description{Name: "B"}},
			args:    json.RawMessage(`{"x":1}`),
			wantErr: "the plugin takes no args",
		},
		{
			name:   "a plugin without Configure accepts none",
			plugin: &buildOnly{desc: framework.Description{Name: "B"}},
		},
		{
			name:   "a plugin without Configure accepts null",
			plugin: &buildOnly{desc: framework.Description{Name: "B"}},
			args:   json.RawMessage(`null`),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := dial(t, tc.plugin).Configure(context.Background(), tc.args)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Configure succeeded, want %q", tc.wantErr)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("Configure error (-want +got):\n%s", diff)
				}
			} else if err != nil {
				t.Fatalf("Configure: %v", err)
			}
			if fp, ok := tc.plugin.(*fullPlugin); ok {
				fp.mu.Lock()
				defer fp.mu.Unlock()
				if !fp.configured {
					t.Error("the plugin's Configure was not called")
				}
				if diff := cmp.Diff(string(tc.wantArgs), string(fp.gotArgs)); diff != "" {
					t.Errorf("args given to the plugin (-want +got):\n%s", diff)
				}
				if tc.wantArgs == nil && fp.gotArgs != nil {
					t.Errorf("args given to the plugin = %q, want nil", fp.gotArgs)
				}
			}
		})
	}
}

func TestValidateRoundTrip(t *testing.T) {
	path := field.NewPath("spec", "trainer", "env").Index(0).Child("name")
	cases := []struct {
		name      string
		warnings  []string
		errs      field.ErrorList
		oldJob    *trainer.TrainJob
		wantErrs  field.ErrorList // when the wire changes the bad value
		wantWarns []string
	}{
		{
			name:      "warnings and every kind of field error",
			warnings:  []string{"numNodes is large", "the runtime is deprecated"},
			wantWarns: []string{"numNodes is large", "the runtime is deprecated"},
			errs: field.ErrorList{
				field.Invalid(path, "PET_NNODES", "reserved by the Torch plugin"),
				field.Required(field.NewPath("spec", "trainer", "image"), "an image is needed"),
				field.Forbidden(field.NewPath("spec", "podGroupPolicy"), "not with this runtime"),
				field.NotSupported(field.NewPath("spec", "mlPolicy", "torch", "numProcPerNode"), "many", []string{"auto", "cpu", "gpu"}),
				field.Duplicate(field.NewPath("spec", "trainer", "env").Index(3), "A"),
				field.NotFound(field.NewPath("spec", "runtimeRef", "name"), "missing"),
				field.TooLong(field.NewPath("metadata", "name"), "x", 63),
			},
			oldJob: testJob(),
		},
		{
			name: "a bad value that is not a string comes back as its JSON value",
			errs: field.ErrorList{
				field.Invalid(field.NewPath("spec", "trainer", "numNodes"), int32(0), "must be at least 1"),
				field.Invalid(field.NewPath("spec", "x"), map[string]any{"a": []any{"b"}}, "no"),
				field.TooMany(field.NewPath("spec", "trainer", "args"), 9, 8),
				field.InternalError(field.NewPath("spec"), errors.New("the cache is not synced")),
			},
			wantErrs: field.ErrorList{
				{Type: field.ErrorTypeInvalid, Field: "spec.trainer.numNodes", BadValue: float64(0), Detail: "must be at least 1"},
				{Type: field.ErrorTypeInvalid, Field: "spec.x", BadValue: map[string]any{"a": []any{"b"}}, Detail: "no"},
				{Type: field.ErrorTypeTooMany, Field: "spec.trainer.args", BadValue: float64(9), Detail: "must have at most 8 items"},
				// The bad value of an internal error is the error: its text travels.
				{Type: field.ErrorTypeInternal, Field: "spec", BadValue: "the cache is not synced", Detail: "the cache is not synced"},
			},
		},
		{
			name: "nothing to say",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &fullPlugin{desc: framework.Description{Name: "V"}, warnings: tc.warnings, fieldErrs: tc.errs}
			c := dial(t, p)
			info, newJob := testInfo(), testJob()
			newJob.Spec.Trainer.NumNodes = ptr.To[int32](3)
			warnings, errs, err := c.Validate(context.Background(), framework.ValidateRequest{Info: info, OldJob: tc.oldJob, NewJob: newJob})
			if err != nil {
				t.Fatalf("ValidateCall: %v", err)
			}
			if diff := cmp.Diff(tc.wantWarns, warnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			want := tc.wantErrs
			if want == nil {
				want = tc.errs
			}
			// Origin and the declarative-validation marks stay on the plugin's side.
			opts := cmp.Options{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(field.Error{}, "Origin", "CoveredByDeclarative", "FromImperative")}
			if diff := cmp.Diff(want, errs, opts); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
			for i := range min(len(want), len(errs)) {
				if diff := cmp.Diff(want[i].Error(), errs[i].Error()); diff != "" {
					t.Errorf("field error %d text (-want +got):\n%s", i, diff)
				}
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if diff := cmp.Diff(info, p.gotInfo); diff != "" {
				t.Errorf("Info seen by the plugin (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.oldJob, p.gotOld); diff != "" {
				t.Errorf("old TrainJob seen by the plugin (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(newJob, p.gotNew); diff != "" {
				t.Errorf("new TrainJob seen by the plugin (-want +got):\n%s", diff)
			}
		})
	}
}

// trainerEnv returns the env of the trainer container of info.
func trainerEnv(info *framework.Info) []corev1.EnvVar {
	return info.PodSets[0].Containers[0].Env
}

func TestEnforceRoundTrip(t *testing.T) {
	type enforceFunc = func(*framework.Info, *trainer.TrainJob) error
	change := func(i *framework.Info, job *trainer.TrainJob) error {
		i.PodSets[0].Containers[0].UpsertEnv(corev1.EnvVar{Name: "PET_NNODES", Value: "2"}, corev1.EnvVar{Name: "A", Value: "changed"})
		i.Labels["trainer.kubeflow.org/job"] = job.Name
		i.PodSets[0].Count = *job.Spec.Trainer.NumNodes
		i.PodSets = append(i.PodSets, framework.PodSet{Name: "launcher", Replicas: 1, Count: 1, Containers: []framework.Container{{Name: "mpi"}}})
		return nil
	}
	cases := []struct {
		name    string
		ml, pg  enforceFunc
		call    func(c *remote.Client, info *framework.Info, job *trainer.TrainJob) error
		want    func(*framework.Info)
		wantErr string // the whole error text
	}{
		{
			name: "EnforceMLPolicy changes arrive",
			ml:   change,
			call: func(c *remote.Client, info *framework.Info, job *trainer.TrainJob) error {
				return c.EnforceMLPolicy(context.Background(), info, job)
			},
			want: func(i *framework.Info) { _ = change(i, testJob()) },
		},
		{
			name: "EnforcePodGroupPolicy changes arrive",
			pg:   change,
			call: func(c *remote.Client, info *framework.Info, job *trainer.TrainJob) error {
				return c.EnforcePodGroupPolicy(context.Background(), info, job)
			},
			want: func(i *framework.Info) { _ = change(i, testJob()) },
		},
		{
			name: "a plugin that changes nothing",
			ml:   func(*framework.Info, *trainer.TrainJob) error { return nil },
			call: func(c *remote.Client, info *framework.Info, job *trainer.TrainJob) error {
				return c.EnforceMLPolicy(context.Background(), info, job)
			},
			want: func(*framework.Info) {},
		},
		{
			name: "a plugin error arrives as written, and its changes do not",
			ml: func(i *framework.Info, job *trainer.TrainJob) error {
				_ = change(i, job)
				return errors.New("torch: numProcPerNode must be positive")
			},
			call: func(c *remote.Client, info *framework.Info, job *trainer.TrainJob) error {
				return c.EnforceMLPolicy(context.Background(), info, job)
			},
			want:    func(*framework.Info) {},
			wantErr: "torch: numProcPerNode must be positive",
		},
		{
			name: "a field error arrives as written",
			pg: func(*framework.Info, *trainer.TrainJob) error {
				return field.Invalid(field.NewPath("spec", "podGroupPolicy", "coscheduling"), 0, "must be positive")
			},
			call: func(c *remote.Client, info *framework.Info, job *trainer.TrainJob) error {
				return c.EnforcePodGroupPolicy(context.Background(), info, job)
			},
			want:    func(*framework.Info) {},
			wantErr: "spec.podGroupPolicy.coscheduling: Invalid value: 0: must be positive",
		},
		{
			name: "a change of version is refused and leaves Info unchanged",
			ml: func(i *framework.Info, _ *trainer.TrainJob) error {
				i.Labels["x"] = "y"
				i.Version = "v2"
				return nil
			},
			call: func(c *remote.Client, info *framework.Info, job *trainer.TrainJob) error {
				return c.EnforceMLPolicy(context.Background(), info, job)
			},
			want:    func(*framework.Info) {},
			wantErr: `replace "/version") is outside Info`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, &fullPlugin{desc: framework.Description{Name: "E"}, enforceML: tc.ml, enforcePG: tc.pg})
			info := testInfo()
			err := tc.call(c, info, testJob())
			switch {
			case tc.wantErr != "" && err == nil:
				t.Fatalf("call succeeded, want %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error %q, want %q", err, tc.wantErr)
			case tc.wantErr != "" && strings.Contains(err.Error(), "rpc error"):
				t.Errorf("error %q shows the gRPC status", err)
			case tc.wantErr == "" && err != nil:
				t.Fatalf("call: %v", err)
			}
			want := testInfo()
			tc.want(want)
			if diff := cmp.Diff(want, info); diff != "" {
				t.Errorf("Info (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnforceOfUnchangedInfoIsAnEmptyPatch(t *testing.T) {
	rpc := connect(t, &fullPlugin{desc: framework.Description{Name: "E"}})
	ctx := context.Background()
	info, job := mustJSON(t, testInfo()), mustJSON(t, testJob())
	ml, err := rpc.EnforceMLPolicy(ctx, &pluginv1.EnforceMLPolicyRequest{Info: info, TrainJob: job})
	if err != nil {
		t.Fatalf("EnforceMLPolicy: %v", err)
	}
	pg, err := rpc.EnforcePodGroupPolicy(ctx, &pluginv1.EnforcePodGroupPolicyRequest{Info: info, TrainJob: job})
	if err != nil {
		t.Fatalf("EnforcePodGroupPolicy: %v", err)
	}
	if len(ml.GetPatch()) != 0 || len(pg.GetPatch()) != 0 {
		t.Errorf("patches = %q, %q; want empty", ml.GetPatch(), pg.GetPatch())
	}
}

func TestPluginErrorsArriveIntact(t *testing.T) {
	const msg = `jobset: replicatedJob "node" has no container named "node"`
	p := &fullPlugin{
		desc:      framework.Description{Name: "E"},
		buildErr:  errors.New(msg),
		watchErr:  errors.New(msg),
		statusErr: errors.New(msg),
	}
	c := dial(t, p)
	ctx := context.Background()
	cases := []struct {
		name string
		call func() error
	}{
		{name: "Build", call: func() error { _, err := c.Build(ctx, testInfo(), testJob()); return err }},
		{name: "Watch", call: func() error { _, err := c.Watch(ctx); return err }},
		{name: "Status", call: func() error { _, err := c.Status(ctx, nil, testJob(), nil); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil {
				t.Fatal("call succeeded")
			}
			if diff := cmp.Diff(msg, err.Error()); diff != "" {
				t.Errorf("error text (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildRoundTrip(t *testing.T) {
	objs := []*unstructured.Unstructured{
		object(jobSetGVK, "job", map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
			"spec": map[string]any{
				"replicatedJobs": []any{map[string]any{"name": "node", "replicas": int64(2)}},
				"suspend":        true,
				"ratio":          0.5,
			},
		}),
		object(secretGVK, "job-ssh", map[string]any{"stringData": map[string]any{"key": "value"}}),
	}
	objs[1].SetNamespace("team-a")
	cases := []struct {
		name    string
		objects []*unstructured.Unstructured
	}{
		{name: "objects", objects: objs},
		{name: "none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &fullPlugin{desc: framework.Description{Name: "B"}, objects: tc.objects}
			c := dial(t, p)
			info := testInfo()
			got, err := c.Build(context.Background(), info, testJob())
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if diff := cmp.Diff(tc.objects, framework.UnstructuredOf(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if diff := cmp.Diff(info, p.gotInfo); diff != "" {
				t.Errorf("Info seen by the plugin (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWatchRoundTrip(t *testing.T) {
	sources := []framework.WatchSource{
		{Kind: podGVK, Mapping: framework.MapByLabel, Label: "trainer.kubeflow.org/trainjob-name"},
		{Kind: jobSetGVK, Mapping: framework.MapByOwner},
	}
	cases := []struct {
		name    string
		sources []framework.WatchSource
	}{
		{name: "both mappings", sources: sources},
		{name: "none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dial(t, &fullPlugin{desc: framework.Description{Name: "W"}, sources: tc.sources}).Watch(context.Background())
			if err != nil {
				t.Fatalf("Watch: %v", err)
			}
			if diff := cmp.Diff(tc.sources, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Watch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusRoundTrip(t *testing.T) {
	at := metav1.NewTime(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC))
	owned := []*unstructured.Unstructured{
		object(jobSetGVK, "job", map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Completed", "status": "True"}}}}),
	}
	cases := []struct {
		name   string
		status *framework.StatusReport
		owned  []*unstructured.Unstructured
	}{
		{
			name: "conditions",
			status: &framework.StatusReport{Conditions: []metav1.Condition{
				{Type: "Complete", Status: metav1.ConditionTrue, Reason: "JobSetCompleted", Message: "done", LastTransitionTime: at, ObservedGeneration: 3},
				{Type: "Failed", Status: metav1.ConditionFalse, Reason: "NoFailure", LastTransitionTime: at},
			}},
			owned: owned,
		},
		{name: "nil", owned: owned},
		{name: "nil with nothing owned"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &fullPlugin{desc: framework.Description{Name: "S"}, status: tc.status}
			c := dial(t, p)
			job := testJob()
			got, err := c.Status(context.Background(), nil, job, tc.owned)
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			timeEqual := cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })
			if diff := cmp.Diff(tc.status, got, timeEqual); diff != "" {
				t.Errorf("Status (-want +got):\n%s", diff)
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if diff := cmp.Diff(tc.owned, p.gotOwned, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("owned objects seen by the plugin (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(job, p.gotStatusOf); diff != "" {
				t.Errorf("TrainJob seen by the plugin (-want +got):\n%s", diff)
			}
		})
	}
}

// An Info field that the host sends and the plugin does not know (a newer
// host, an older plugin) is dropped by the plugin's decode. The plugin's
// patch is computed against what it decoded, but applied by the host to
// what it sent: the field must survive. The host here is simulated with the
// raw client, since the host's own Info type knows every field it sends.
func TestEnforceKeepsFieldsThePluginDoesNotKnow(t *testing.T) {
	p := &fullPlugin{
		desc: framework.Description{Name: "E"},
		enforceML: func(i *framework.Info, _ *trainer.TrainJob) error {
			i.PodSets[0].Containers[0].UpsertEnv(corev1.EnvVar{Name: "PET_NNODES", Value: "2"})
			i.PodSets[0].Count = 3
			i.Labels["x"] = "y"
			return nil
		},
	}
	rpc := connect(t, p)
	var doc map[string]any
	if err := json.Unmarshal(mustJSON(t, testInfo()), &doc); err != nil {
		t.Fatal(err)
	}
	doc["futureTopLevel"] = map[string]any{"a": "b"}
	podSet := doc["podSets"].([]any)[0].(map[string]any)
	podSet["futurePodSetField"] = []any{"kept"}
	podSet["containers"].([]any)[0].(map[string]any)["futureContainerField"] = true
	sent := mustJSON(t, doc)

	resp, err := rpc.EnforceMLPolicy(context.Background(), &pluginv1.EnforceMLPolicyRequest{Info: sent, TrainJob: mustJSON(t, testJob())})
	if err != nil {
		t.Fatalf("EnforceMLPolicy: %v", err)
	}
	patch, err := jsonpatch.DecodePatch(resp.GetPatch())
	if err != nil {
		t.Fatalf("the answer %s is not a JSON Patch: %v", resp.GetPatch(), err)
	}
	patched, err := patch.Apply(sent)
	if err != nil {
		t.Fatalf("the patch %s does not apply to what the host sent: %v", resp.GetPatch(), err)
	}
	var got map[string]any
	if err := json.Unmarshal(patched, &got); err != nil {
		t.Fatal(err)
	}
	want := doc
	wantPodSet := want["podSets"].([]any)[0].(map[string]any)
	wantPodSet["count"] = float64(3)
	wantContainer := wantPodSet["containers"].([]any)[0].(map[string]any)
	wantContainer["env"] = append(wantContainer["env"].([]any), map[string]any{"name": "PET_NNODES", "value": "2"})
	want["labels"].(map[string]any)["x"] = "y"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Info after the plugin's patch (-want +got):\n%s\npatch: %s", diff, resp.GetPatch())
	}
}

// The runner calls a dialed plugin only at the points the plugin behind it
// implements, although its Client's type implements them all.
func TestRunnerCallsAClientOnlyAtItsPoints(t *testing.T) {
	b := &buildOnly{
		desc:    framework.Description{Name: "B", MLPolicyKeys: []string{framework.NoPolicyKey}, Builds: []schema.GroupVersionKind{secretGVK}},
		objects: []*unstructured.Unstructured{object(secretGVK, "job-secret", nil)},
	}
	owner := &ownerOnly{desc: framework.Description{Name: "O", PodGroupPolicyKeys: []string{"coscheduling"}}}
	ctx := context.Background()
	fw, err := frameworkruntime.New(ctx, framework.Registry{}, []frameworkruntime.PluginSpec{
		{Name: "B", Plugin: dialPlugin(t, b)},
		{Name: "O", Plugin: dialPlugin(t, owner)},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	info := &framework.Info{Version: framework.InfoVersion, RuntimePolicy: framework.RuntimePolicy{PodGroupPolicy: json.RawMessage(`{"coscheduling":{}}`)}}
	job := testJob()
	plugins := fw.Current()
	warnings, errs := plugins.Validate(ctx, framework.ValidateRequest{Info: info, NewJob: job})
	if len(warnings) != 0 || len(errs) != 0 {
		t.Errorf("Validate = %v, %v; want nothing", warnings, errs)
	}
	built, _, err := runtimetest.Build(ctx, plugins, info, job)
	if err != nil {
		t.Fatalf("Enforce and Build: %v", err)
	}
	if len(built) != 1 || built[0].Plugin != "B" || built[0].Object.GetName() != "job-secret" {
		t.Errorf("Build = %v, want B's secret", built)
	}
	keys, err := info.PolicyKeys()
	if err != nil {
		t.Fatal(err)
	}
	cycle, err := plugins.NewCycle(job, keys)
	if err != nil {
		t.Fatal(err)
	}
	st, err := cycle.Status(ctx, nil, func(context.Context, schema.GroupVersionKind) ([]*unstructured.Unstructured, error) { return nil, nil })
	if err != nil || st != nil {
		t.Errorf("Status = %v, %v; want nil, nil", st, err)
	}
	sources, _, err := plugins.WatchSources(ctx)
	if err != nil || len(sources) != 1 {
		t.Errorf("WatchSources = %v, %v; want B's built kind", sources, err)
	}
}

// What a plugin says is wrong with its input (a field error, or an
// InvalidJobError: the protocol's INVALID_ARGUMENT) reaches the host as an
// invalid job, which the controller does not retry; any other failure
// does not.
func TestInvalidInputCrossesTheProtocol(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		invalid bool
	}{
		{"a field error", field.Invalid(field.NewPath("spec", "trainer", "numNodes"), 0, "must be at least 1"), true},
		{"no trainer step", framework.ErrNoTrainerStep, true},
		{"a failure of the plugin itself", errors.New("the license server is down"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, &fullPlugin{desc: framework.Description{Name: "Full"}, enforceML: func(*framework.Info, *trainer.TrainJob) error { return tc.err }})
			err := c.EnforceMLPolicy(context.Background(), testInfo(), testJob())
			if err == nil || framework.IsInvalidJob(&framework.PluginError{Plugin: "Full", Point: framework.PointEnforceMLPolicy, Err: err}) != tc.invalid {
				t.Errorf("EnforceMLPolicy error %v: invalid job = %v, want %v", err, !tc.invalid, tc.invalid)
			}
			if !strings.Contains(err.Error(), tc.err.Error()) {
				t.Errorf("error %q does not carry the plugin's message %q", err, tc.err)
			}
		})
	}
}

// Served, a plugin whose Status the host would never call fails its
// Describe, so that the host refuses it at its start with the reason.
func TestServedStatusOfAnEarlierSDKFailsDescribe(t *testing.T) {
	_, _, err := remote.NewClient(connect(t, testfixture.StatusBeforeReport{}), remote.Limits{}).Describe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "plugin Old") || !strings.Contains(err.Error(), "return *framework.StatusReport") {
		t.Errorf("Describe = %v, want an error naming the plugin and what Status returns", err)
	}
}
