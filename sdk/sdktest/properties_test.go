package sdktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// The fakes below are plugins that each break one property. Which
// extension points a plugin implements depends on its type, so there is
// one type per combination of points.

var (
	configMap = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	secret    = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
)

// describer implements only Describe.
type describer struct{ desc framework.Description }

func (d describer) Describe() framework.Description { return d.desc }

type enforceFunc func(*framework.Info, *trainer.TrainJob) error

type buildFunc func(*framework.Info, *trainer.TrainJob) ([]framework.Object, error)

// enforcer implements EnforceMLPolicy.
type enforcer struct {
	describer
	enforce enforceFunc
}

func (e enforcer) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	return e.enforce(info, job)
}

// builder implements Build.
type builder struct {
	describer
	build buildFunc
}

func (b builder) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	return b.build(info, job)
}

// reporter implements Status.
type reporter struct{ describer }

func (reporter) Status(context.Context, *framework.Info, *trainer.TrainJob, []*unstructured.Unstructured) (*framework.StatusReport, error) {
	return nil, nil
}

// validating implements Validate.
type validating struct {
	describer
	validate func(*trainer.TrainJob) ([]string, field.ErrorList)
}

func (v validating) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	job := req.NewJob
	w, errs := v.validate(job)
	return w, errs, nil
}

// buildReporter implements Build and Status.
type buildReporter struct {
	builder
	status func(owned []*unstructured.Unstructured) (*framework.StatusReport, error)
}

func (b buildReporter) Status(_ context.Context, _ *framework.Info, _ *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	return b.status(owned)
}

// infoReporter is a buildReporter whose Status needs Info.
type infoReporter struct{ buildReporter }

func (r infoReporter) Status(ctx context.Context, info *framework.Info, job *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	if info == nil {
		return nil, errors.New("no Info")
	}
	return r.buildReporter.Status(ctx, info, job, owned)
}

// reportsConditions is a builder of one ConfigMap whose Status reports
// status().
func reportsConditions(name string, status func(owned []*unstructured.Unstructured) (*framework.StatusReport, error)) buildReporter {
	return buildReporter{builder{builds(name, configMap), buildObjects(object(configMap, "", "cm"))}, status}
}

func condition(typ string, status metav1.ConditionStatus, reason, message string) *framework.StatusReport {
	return &framework.StatusReport{Conditions: []metav1.Condition{{Type: typ, Status: status, Reason: reason, Message: message}}}
}

// watcher implements Watch.
type watcher struct {
	describer
	sources []framework.WatchSource
}

func (w watcher) Watch(context.Context) ([]framework.WatchSource, error) { return w.sources, nil }

// configurable implements Configure; with versionFromArgs its Describe
// depends on the args.
type configurable struct {
	reject          bool
	versionFromArgs bool
	args            atomic.Value
}

func (c *configurable) Describe() framework.Description {
	d := framework.Description{Name: "Configurable"}
	if c.versionFromArgs {
		d.Version, _ = c.args.Load().(string)
	}
	return d
}

func (c *configurable) Configure(_ context.Context, args json.RawMessage) error {
	if c.reject && len(args) > 0 {
		return errors.New("args: unknown field \"port\"")
	}
	c.args.Store(string(args))
	return nil
}

func setEnv(name, value string) enforceFunc {
	return func(info *framework.Info, _ *trainer.TrainJob) error {
		_, c, err := info.Trainer()
		if err != nil {
			return err
		}
		c.UpsertEnv(corev1.EnvVar{Name: name, Value: value})
		return nil
	}
}

func object(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// buildObjects builds the given objects, whatever the input.
func buildObjects(objs ...*unstructured.Unstructured) buildFunc {
	return func(*framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
		out := make([]*unstructured.Unstructured, 0, len(objs))
		for _, o := range objs {
			out = append(out, o.DeepCopy())
		}
		return framework.Apply(out...), nil
	}
}

func named(name string, mlKeys ...string) describer {
	return describer{framework.Description{Name: name, MLPolicyKeys: mlKeys}}
}

func builds(name string, kinds ...schema.GroupVersionKind) describer {
	return describer{framework.Description{Name: name, Builds: kinds}}
}

func TestPropertiesOfBrokenPlugins(t *testing.T) {
	var counter atomic.Int64
	withArgs := greet(t)
	withArgs.Name = "with-args"
	withArgs.Args = json.RawMessage(`{"port":1234}`)

	cases := []struct {
		name   string
		plugin framework.Plugin
		cases  []sdktest.Case
		// want are the properties reported, in order, each with a
		// fragment of its message.
		want []sdktest.Property
		text []string
	}{
		{
			name:   "a plugin with all properties",
			plugin: hello{},
		},
		{
			name: "a builder with all properties",
			plugin: builder{builds("Good", configMap), func(_ *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
				return framework.Apply(object(configMap, job.Namespace, job.Name+"-config"), object(configMap, "", job.Name+"-extra")), nil
			}},
		},
		{
			name: "Enforce that appends instead of upserting is not idempotent",
			plugin: enforcer{named("Appender"), func(info *framework.Info, _ *trainer.TrainJob) error {
				_, c, err := info.Trainer()
				c.Env = append(c.Env, corev1.EnvVar{Name: "STEP", Value: "1"})
				return err
			}},
			want: []sdktest.Property{sdktest.PropEnforceIdempotent},
			text: []string{`case "greet": enforcing the resulting Info again changed it`},
		},
		{
			name: "Enforce that counts its calls is neither deterministic nor idempotent",
			plugin: enforcer{named("Counter"), func(info *framework.Info, job *trainer.TrainJob) error {
				return setEnv("CALL", strconv.FormatInt(counter.Add(1), 10))(info, job)
			}},
			want: []sdktest.Property{sdktest.PropEnforceDeterministic, sdktest.PropEnforceIdempotent},
			text: []string{"two Enforce on the same input gave different Info", "CALL"},
		},
		{
			name:   "Enforce that fails",
			plugin: enforcer{named("Failing"), func(*framework.Info, *trainer.TrainJob) error { return errors.New("no GPU in sight") }},
			want:   []sdktest.Property{sdktest.PropEnforceApplies},
			text:   []string{"EnforceMLPolicy failed: no GPU in sight"},
		},
		{
			name: "Enforce that changes Info's version makes a patch the host refuses",
			plugin: enforcer{named("Versioner"), func(info *framework.Info, _ *trainer.TrainJob) error {
				info.Version = "v9"
				return nil
			}},
			want: []sdktest.Property{sdktest.PropEnforceApplies},
			text: []string{"/version", "is outside Info"},
		},
		{
			name:   "Build of an undeclared kind",
			plugin: builder{builds("Undeclared", secret), buildObjects(object(configMap, "", "greet"))},
			want:   []sdktest.Property{sdktest.PropBuildObjects},
			text:   []string{`object 0 (ConfigMap "greet") is of kind v1/ConfigMap, which the plugin does not declare in Description.Builds [v1/Secret]`},
		},
		{
			name:   "Build with a name the API server rejects",
			plugin: builder{builds("BadName", configMap), buildObjects(object(configMap, "", "Greet_Config"))},
			want:   []sdktest.Property{sdktest.PropBuildObjects},
			text:   []string{"metadata.name is not a valid DNS-1123 subdomain"},
		},
		{
			name:   "Build without a name",
			plugin: builder{builds("NoName", configMap), buildObjects(object(configMap, "", ""))},
			want:   []sdktest.Property{sdktest.PropBuildObjects},
			text:   []string{"has no metadata.name"},
		},
		{
			name:   "Build in another namespace",
			plugin: builder{builds("Elsewhere", configMap), buildObjects(object(configMap, "kube-system", "greet"))},
			want:   []sdktest.Property{sdktest.PropBuildObjects},
			text:   []string{`is in namespace "kube-system"; leave the namespace empty or set the TrainJob's ("team-a")`},
		},
		{
			name:   "Build of two objects of the same kind and name",
			plugin: builder{builds("Twice", configMap), buildObjects(object(configMap, "", "greet"), object(configMap, "team-a", "greet"))},
			want:   []sdktest.Property{sdktest.PropBuildObjects},
			text:   []string{"two objects have this kind and name"},
		},
		{
			name: "Build that names objects after a counter",
			plugin: builder{builds("Random", configMap), func(*framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
				return framework.Apply(object(configMap, "", fmt.Sprintf("greet-%d", counter.Add(1)))), nil
			}},
			want: []sdktest.Property{sdktest.PropBuildDeterministic},
			text: []string{"two Build on the same input gave different objects"},
		},
		{
			name: "Build of a key created once, new on every Build",
			plugin: builder{builds("KeyMaker", secret), func(*framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
				o := object(secret, "", "greet-key")
				_ = unstructured.SetNestedField(o.Object, fmt.Sprint("key-", counter.Add(1)), "stringData", "key")
				return []framework.Object{framework.CreateOnce(o)}, nil
			}},
		},
		{
			name: "Build of an object created once under a new name on every Build",
			plugin: builder{builds("Renamer", secret), func(*framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
				return []framework.Object{framework.CreateOnce(object(secret, "", fmt.Sprint("greet-", counter.Add(1))))}, nil
			}},
			want: []sdktest.Property{sdktest.PropBuildDeterministic},
			text: []string{"two Build on the same input gave different objects", "greet-"},
		},
		{
			name:   "Build without declared kinds",
			plugin: builder{named("NoKinds"), buildObjects()},
			want:   []sdktest.Property{sdktest.PropDescribe},
			text:   []string{"implements Build but declares no kind in Description.Builds"},
		},
		{
			name:   "declared kinds without Build",
			plugin: builds("NoBuild", configMap),
			want:   []sdktest.Property{sdktest.PropDescribe},
			text:   []string{"Description.Builds lists [v1/ConfigMap] but the plugin does not implement Build"},
		},
		{
			name:   "Status without Builds",
			plugin: reporter{named("Reporter")},
			want:   []sdktest.Property{sdktest.PropDescribe},
			text:   []string{"implements Status but builds nothing"},
		},
		{
			name:   "Describe that depends on Configure",
			plugin: &configurable{versionFromArgs: true},
			cases:  []sdktest.Case{withArgs},
			want:   []sdktest.Property{sdktest.PropDescribe},
			text:   []string{`case "with-args": Describe answers differently after Configure`},
		},
		{
			name:   "Configure that rejects a case's args",
			plugin: &configurable{reject: true},
			cases:  []sdktest.Case{withArgs},
			want:   []sdktest.Property{sdktest.PropConfigure},
			text:   []string{`case "with-args": Configure({"port":1234}) failed: args: unknown field "port"`},
		},
		{
			name:   "a plugin given no case",
			plugin: enforcer{named("Lonely"), setEnv("A", "b")},
			cases:  []sdktest.Case{},
			want:   []sdktest.Property{sdktest.PropCases},
			text:   []string{"no cases"},
		},
		{
			name:   "a case the plugin takes no part in",
			plugin: enforcer{named("MPI", "mpi"), setEnv("A", "b")},
			want:   []sdktest.Property{sdktest.PropCases},
			text:   []string{`the plugin owns policy keys (mlPolicy ["mpi"], podGroupPolicy [])`},
		},
		{
			name:   "cases without names",
			plugin: hello{},
			cases:  []sdktest.Case{{Name: ""}, greet(t), greet(t)},
			want:   []sdktest.Property{sdktest.PropCases, sdktest.PropCases},
			text:   []string{"a case has no name", `case "greet": two cases have this name`},
		},
		{
			name: "Watch with a label mapping and no label",
			plugin: watcher{named("Watcher"), []framework.WatchSource{
				{Kind: configMap, Mapping: framework.MapByOwner},
				{Kind: secret, Mapping: framework.MapByLabel},
			}},
			want: []sdktest.Property{sdktest.PropWatch},
			text: []string{`source 1 (v1/Secret): the mapping must be "OwnerReference", or "Label" with a label`},
		},
	}
	cases = append(cases, []struct {
		name   string
		plugin framework.Plugin
		cases  []sdktest.Case
		want   []sdktest.Property
		text   []string
	}{
		{
			name: "Validate whose field error names no field",
			plugin: validating{named("Vague"), func(*trainer.TrainJob) ([]string, field.ErrorList) {
				return nil, field.ErrorList{{Type: field.ErrorTypeInvalid, Detail: "something is wrong"}}
			}},
			want: []sdktest.Property{sdktest.PropValidate},
			text: []string{"field error 0 (something is wrong) names no field"},
		},
		{
			name: "Validate that counts its calls",
			plugin: validating{named("Counting"), func(*trainer.TrainJob) ([]string, field.ErrorList) {
				return []string{fmt.Sprint("call ", counter.Add(1))}, nil
			}},
			want: []sdktest.Property{sdktest.PropValidate},
			text: []string{"two Validate on the same TrainJob gave different answers"},
		},
		{
			name: "Status that fails before the objects exist",
			plugin: reportsConditions("Impatient", func(owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
				if len(owned) == 0 {
					return nil, errors.New("no ConfigMap yet")
				}
				return nil, nil
			}),
			want: []sdktest.Property{sdktest.PropStatus},
			text: []string{"Status with no owned objects failed: no ConfigMap yet; return nil while there is nothing to report"},
		},
		{
			name: "Status with a reason the API server refuses",
			plugin: reportsConditions("Chatty", func([]*unstructured.Unstructured) (*framework.StatusReport, error) {
				return condition("Complete", metav1.ConditionTrue, "all done", ""), nil
			}),
			want: []sdktest.Property{sdktest.PropStatus, sdktest.PropStatus, sdktest.PropStatus},
			text: []string{`condition Complete has reason "all done", which the API server refuses`},
		},
		{
			name: "Status with a status that is not True, False or Unknown",
			plugin: reportsConditions("Yes", func([]*unstructured.Unstructured) (*framework.StatusReport, error) {
				return condition("Complete", "Yes", "Done", ""), nil
			}),
			want: []sdktest.Property{sdktest.PropStatus, sdktest.PropStatus, sdktest.PropStatus},
			text: []string{`condition Complete has status "Yes"; use True, False or Unknown`},
		},
		{
			name: "Status that counts its calls",
			plugin: reportsConditions("Clock", func([]*unstructured.Unstructured) (*framework.StatusReport, error) {
				return condition("Running", metav1.ConditionTrue, "Running", fmt.Sprint("call ", counter.Add(1))), nil
			}),
			want: []sdktest.Property{sdktest.PropStatus, sdktest.PropStatus, sdktest.PropStatus},
			text: []string{"two Status with no owned objects gave different answers", "two Status with the objects it built gave different answers", "two Status with the objects it built and no Info (a host that has none) gave different answers"},
		},
		{
			name: "Status that fails without Info",
			plugin: infoReporter{reportsConditions("NeedsInfo", func([]*unstructured.Unstructured) (*framework.StatusReport, error) {
				return nil, nil
			})},
			want: []sdktest.Property{sdktest.PropStatus},
			text: []string{"Status with the objects it built and no Info (a host that has none) failed: no Info"},
		},
		{
			name: "Status that reports nothing, then the built objects' state",
			plugin: reportsConditions("Fine", func(owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
				if len(owned) == 0 {
					return nil, nil
				}
				return condition("Created", metav1.ConditionTrue, "ConfigMapCreated", owned[0].GetNamespace()+"/"+owned[0].GetName()), nil
			}),
		},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inputs := tc.cases
			if inputs == nil {
				inputs = []sdktest.Case{greet(t)}
			}
			errs := sdktest.Properties(t, tc.plugin, inputs...)
			var got []sdktest.Property
			var messages []string
			for _, err := range errs {
				var pe *sdktest.PropertyError
				if !errors.As(err, &pe) {
					t.Fatalf("Properties returned %T, not a *PropertyError: %v", err, err)
				}
				got = append(got, pe.Property)
				messages = append(messages, err.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("properties reported = %v, want %v; errors:\n%s", got, tc.want, strings.Join(messages, "\n"))
			}
			all := strings.Join(messages, "\n")
			for _, text := range tc.text {
				if !strings.Contains(all, text) {
					t.Errorf("no error says %q; errors:\n%s", text, all)
				}
			}
		})
	}
}

// TestCheckReports runs Check on broken plugins in a child test process
// and reads its verdict: Check fails the subtest of the broken property,
// with a message naming the property and the case, and passes the others.
func TestCheckReports(t *testing.T) {
	out, err := runHelper(t, "TestCheckHelper", "appender")
	if err == nil {
		t.Fatalf("Check passed an Enforce that is not idempotent:\n%s", out)
	}
	for _, want := range []string{
		"--- FAIL: TestCheckHelper/Enforce/idempotent",
		`Enforce/idempotent, case "greet": enforcing the resulting Info again changed it (-once +twice)`,
		"- name: STEP",
		"--- PASS: TestCheckHelper/Enforce/deterministic",
		"--- PASS: TestCheckHelper/Describe",
		"--- SKIP: TestCheckHelper/Build/objects",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output of Check does not say %q:\n%s", want, out)
		}
	}
}

// TestCheckHelper is run by TestCheckReports only.
func TestCheckHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "appender" {
		t.Skip("run by TestCheckReports")
	}
	sdktest.Check(t, enforcer{named("Appender"), func(info *framework.Info, _ *trainer.TrainJob) error {
		_, c, err := info.Trainer()
		c.Env = append(c.Env, corev1.EnvVar{Name: "STEP", Value: "1"})
		return err
	}}, greet(t))
}

// TestGoldenReports runs Golden in a child test process: without a golden
// file and with a stale one it fails and says how to update; with -update
// it writes the file, which then matches.
func TestGoldenReports(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(goldenDirEnv, dir)
	path := filepath.Join(dir, "greet.golden.yaml")

	out, err := runHelper(t, "TestGoldenHelper", "golden")
	if err == nil || !strings.Contains(out, "there is no golden file "+path) || !strings.Contains(out, "go test -run 'TestGoldenHelper/greet' -update") {
		t.Errorf("Golden without a golden file: err = %v, want a failure that says how to write it:\n%s", err, out)
	}

	if out, err := runHelper(t, "TestGoldenHelper", "golden", "-update"); err != nil {
		t.Fatalf("Golden -update: %v\n%s", err, out)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("Golden -update wrote no file: %v", err)
	}
	committed, err := os.ReadFile("testdata/greet.golden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != string(committed) {
		t.Errorf("Golden -update wrote\n%s\nwant the committed testdata/greet.golden.yaml\n%s", written, committed)
	}
	if out, err := runHelper(t, "TestGoldenHelper", "golden"); err != nil {
		t.Errorf("Golden after -update: %v\n%s", err, out)
	}

	stale := strings.Replace(string(written), "value: world", "value: everyone", 1)
	if err := os.WriteFile(path, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runHelper(t, "TestGoldenHelper", "golden")
	for _, want := range []string{"the plugin's output differs from " + path + " (-golden +now)", "-", "value: everyone", "+", "value: world", "-update"} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("Golden with a stale golden file: err = %v, want a failure that says %q:\n%s", err, want, out)
		}
	}
}

// TestGoldenHelper is run by TestGoldenReports only.
func TestGoldenHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "golden" {
		t.Skip("run by TestGoldenReports")
	}
	sdktest.Golden(t, hello{}, os.Getenv(goldenDirEnv), greet(t))
}

const (
	helperEnv    = "SDKTEST_HELPER"
	goldenDirEnv = "SDKTEST_GOLDEN_DIR"
)

// runHelper runs one test of this package in a child process and returns
// its verbose output.
func runHelper(t *testing.T, test, mode string, flags ...string) (string, error) {
	t.Helper()
	args := append([]string{"-test.run=^" + test + "$", "-test.v", "-test.count=1"}, flags...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestRunReportsEachPropertyAndCase checks Run's results, which the
// conformance tool prints one per line.
func TestRunReportsEachPropertyAndCase(t *testing.T) {
	other := greet(t)
	other.Name = "other"
	appender := enforcer{named("Appender"), func(info *framework.Info, _ *trainer.TrainJob) error {
		_, c, err := info.Trainer()
		c.Env = append(c.Env, corev1.EnvVar{Name: "STEP", Value: "1"})
		return err
	}}
	results := sdktest.Run(context.Background(), sdktest.ConnectRPC(t, appender), greet(t), other)
	var lines []string
	for _, r := range results {
		first, _, _ := strings.Cut(r.String(), "\n")
		lines = append(lines, first)
	}
	want := []string{
		"PASS Describe",
		"PASS Configure (case greet)",
		"PASS Configure (case other)",
		"SKIP Watch: the plugin does not implement Watch",
		"PASS Cases (case greet)",
		"PASS Cases (case other)",
		"PASS Enforce/applies (case greet)",
		"PASS Enforce/applies (case other)",
		"PASS Enforce/deterministic (case greet)",
		"PASS Enforce/deterministic (case other)",
		"FAIL Enforce/idempotent (case greet): enforcing the resulting Info again changed it (-once +twice) (the host enforces on every reconcile; a second pass must change nothing):",
		"FAIL Enforce/idempotent (case other): enforcing the resulting Info again changed it (-once +twice) (the host enforces on every reconcile; a second pass must change nothing):",
		"SKIP Build/objects: the plugin does not implement Build",
		"SKIP Build/deterministic: the plugin does not implement Build",
		"SKIP Validate: the plugin does not implement Validate",
		"SKIP Status: the plugin does not implement Status",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("Run results (-want +got):\n%s", diff)
	}
	for _, r := range results {
		if r.Passed() == (strings.HasPrefix(r.String(), "FAIL") || strings.HasPrefix(r.String(), "SKIP")) {
			t.Errorf("Passed() = %v for %q", r.Passed(), r.String())
		}
	}
}

// TestGoldenMasksWhatACreatedOnceObjectChanges: a generated key differs
// on every Build, so the golden file shows a mark for it, and the rest.
func TestGoldenMasksWhatACreatedOnceObjectChanges(t *testing.T) {
	t.Setenv(goldenDirEnv, t.TempDir())
	if out, err := runHelper(t, "TestGoldenKeyHelper", "golden-key", "-update"); err != nil {
		t.Fatalf("Golden -update: %v\n%s", err, out)
	}
	if out, err := runHelper(t, "TestGoldenKeyHelper", "golden-key"); err != nil {
		t.Fatalf("Golden changed from one run to the next although only the created-once key differs: %v\n%s", err, out)
	}
	written, err := os.ReadFile(filepath.Join(os.Getenv(goldenDirEnv), "greet.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ssh-privatekey: '<created once: differs on every Build>'", "type: kubernetes.io/ssh-auth", "name: greet-key", "createdOnce:\n- Secret greet-key"} {
		if !strings.Contains(string(written), want) {
			t.Errorf("the golden file does not hold %q:\n%s", want, written)
		}
	}
}

// TestGoldenKeyHelper is run by TestGoldenMasksWhatACreatedOnceObjectChanges only.
func TestGoldenKeyHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "golden-key" {
		t.Skip("run by TestGoldenMasksWhatACreatedOnceObjectChanges")
	}
	var counter atomic.Int64
	keys := builder{builds("KeyMaker", secret), func(*framework.Info, *trainer.TrainJob) ([]framework.Object, error) {
		o := object(secret, "", "greet-key")
		_ = unstructured.SetNestedField(o.Object, "kubernetes.io/ssh-auth", "type")
		_ = unstructured.SetNestedField(o.Object, fmt.Sprint("key-", counter.Add(1)), "stringData", "ssh-privatekey")
		return []framework.Object{framework.CreateOnce(o)}, nil
	}}
	sdktest.Golden(t, keys, os.Getenv(goldenDirEnv), greet(t))
}

// TestCheckOutputIsQuiet: a passing Check prints nothing but the test
// verdicts, no log lines of the gRPC machinery.
func TestCheckOutputIsQuiet(t *testing.T) {
	out, err := runHelper(t, "TestQuietHelper", "quiet")
	if err != nil {
		t.Fatalf("Check of hello failed: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		line = strings.TrimSpace(line)
		// Test verdicts, and the messages of the tests themselves (skips).
		if !strings.HasPrefix(line, "=== ") && !strings.HasPrefix(line, "--- ") && !testMessage.MatchString(line) && line != "PASS" {
			t.Errorf("Check printed %q; a passing Check prints only test verdicts:\n%s", line, out)
		}
	}
}

var testMessage = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

// TestQuietHelper is run by TestCheckOutputIsQuiet only.
func TestQuietHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "quiet" {
		t.Skip("run by TestCheckOutputIsQuiet")
	}
	sdktest.Check(t, hello{}, greet(t))
}

// noConfigure is a plugin, as one in another language may be, that
// answers Configure with UNIMPLEMENTED.
type noConfigure struct {
	pluginv1.PluginServiceClient
}

func (noConfigure) Configure(context.Context, *pluginv1.ConfigureRequest, ...grpc.CallOption) (*pluginv1.ConfigureResponse, error) {
	return nil, status.Error(codes.Unimplemented, "no Configure")
}

// TestConfigureMayBeUnimplemented: the host accepts a plugin without
// Configure when its entry has no args, and refuses args to it; so do Run
// and GoldenRPC.
func TestConfigureMayBeUnimplemented(t *testing.T) {
	rpc := noConfigure{sdktest.ConnectRPC(t, hello{})}
	withArgs := greet(t)
	withArgs.Name, withArgs.Args = "with-args", json.RawMessage(`{"port": 1234}`)
	var got []string
	for _, r := range sdktest.Run(context.Background(), rpc, greet(t), withArgs) {
		if r.Property == sdktest.PropConfigure {
			got = append(got, r.String())
		}
	}
	want := []string{
		"PASS Configure (case greet)",
		`FAIL Configure (case with-args): Configure({"port": 1234}) failed: the plugin does not implement this extension point: no Configure (args the plugin rejects stop the controller's start-up)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Configure results (-want +got):\n%s", diff)
	}
	sdktest.GoldenRPC(t, rpc, "testdata", greet(t))
}
