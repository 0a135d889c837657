package volcano_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/plugins/volcano"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// cases are the plugin's inputs: a gang with initializers, init containers,
// a sidecar and overhead whose runtime names the queue, priority and
// topology; and a bare runtime whose TrainJob picks the queue, with a
// schedulerName in the args.
func cases(t *testing.T) []sdktest.Case {
	gang := sdktest.CaseFromFiles(t, "gang", "testdata/gang.yaml", "testdata/gang.yaml")
	queue := sdktest.CaseFromFiles(t, "queue-override", "testdata/queue-override.yaml", "testdata/queue-override.yaml")
	queue.Args = json.RawMessage(`{"schedulerName": "volcano"}`)
	return []sdktest.Case{gang, queue}
}

// TestProperties checks what every plugin must satisfy, over gRPC as the
// controller calls it.
func TestProperties(t *testing.T) {
	sdktest.Check(t, volcano.New(), cases(t)...)
}

// TestGolden pins what the plugin makes of each case:
// testdata/<case>.golden.yaml. After an intended change:
//
//	go test ./plugins/volcano -run TestGolden -update
func TestGolden(t *testing.T) {
	sdktest.Golden(t, volcano.New(), "testdata", cases(t)...)
}

// run enforces the case through the host's client and builds, returning
// Info and the one PodGroup. mlPolicy, when given, stands for the ML
// plugins that run before: it changes Info first.
func run(t *testing.T, c sdktest.Case, mlPolicy ...func(*framework.Info)) (*framework.Info, *volcanov1beta1.PodGroup) {
	t.Helper()
	ctx := context.Background()
	info, err := framework.NewInfo(c.Job, c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range mlPolicy {
		f(info)
	}
	client := sdktest.Connect(t, volcano.New())
	if err := client.Configure(ctx, c.Args); err != nil {
		t.Fatal(err)
	}
	if err := client.EnforcePodGroupPolicy(ctx, info, c.Job); err != nil {
		t.Fatal(err)
	}
	objs, err := client.Build(ctx, info, c.Job)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("Build returned %d objects, want one PodGroup", len(objs))
	}
	return info, podGroupOf(t, objs[0].Unstructured)
}

func podGroupOf(t *testing.T, u *unstructured.Unstructured) *volcanov1beta1.PodGroup {
	t.Helper()
	if got := u.GroupVersionKind(); got != volcano.GVK {
		t.Fatalf("built a %s, want a %s", got, volcano.GVK)
	}
	pg := &volcanov1beta1.PodGroup{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pg); err != nil {
		t.Fatal(err)
	}
	return pg
}

var quantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestPodGroupOfAGang(t *testing.T) {
	info, pg := run(t, cases(t)[0])

	if pg.Name != "llm" || pg.Namespace != "team-a" {
		t.Errorf("PodGroup %s/%s, want team-a/llm", pg.Namespace, pg.Name)
	}
	if diff := cmp.Diff(map[string]string{"team": "nlp"}, pg.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	// One trainer pod: max(init container fetch 6, containers 4 + sidecar
	// 0.5) CPUs plus 250m overhead; memory 16Gi + 256Mi; 2 GPUs from the
	// limit. Two pods; the initializers do not count.
	wantResources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("12500m"),
		corev1.ResourceMemory: resource.MustParse("33280Mi"),
		"nvidia.com/gpu":      resource.MustParse("4"),
	}
	want := volcanov1beta1.PodGroupSpec{
		MinMember:         2,
		MinResources:      &wantResources,
		Queue:             "research",
		PriorityClassName: "high-priority",
		NetworkTopology:   &volcanov1beta1.NetworkTopologySpec{Mode: volcanov1beta1.SoftNetworkTopologyMode, HighestTierAllowed: ptr.To(2)},
	}
	if diff := cmp.Diff(want, pg.Spec, quantities); diff != "" {
		t.Errorf("PodGroup spec (-want +got):\n%s", diff)
	}

	for _, ps := range info.PodSets {
		got := ps.PodAnnotations[volcano.GroupNameAnnotation]
		wantGroup := ""
		if ps.Name == "node" {
			wantGroup = "llm"
		}
		if got != wantGroup {
			t.Errorf("podSet %s: annotation %s = %q, want %q", ps.Name, volcano.GroupNameAnnotation, got, wantGroup)
		}
		if ps.SchedulerName != "" {
			t.Errorf("podSet %s: schedulerName %q, want none without args", ps.Name, ps.SchedulerName)
		}
	}
}

func TestTrainJobChoosesTheQueueAndArgsTheScheduler(t *testing.T) {
	info, pg := run(t, cases(t)[1])
	want := volcanov1beta1.PodGroupSpec{MinMember: 1, Queue: "urgent"}
	if diff := cmp.Diff(want, pg.Spec, quantities); diff != "" {
		t.Errorf("PodGroup spec (-want +got):\n%s", diff)
	}
	if got := info.PodSets[0].SchedulerName; got != "volcano" {
		t.Errorf("schedulerName %q, want the args' volcano", got)
	}
}

// An elastic trainer step (set by Torch for mlPolicy.torch.elasticPolicy)
// reaches the plugin through the SDK: its gang is the minimum, so the job
// starts once that fits and a resize leaves the PodGroup as it is.
func TestElasticGangIsItsMinimum(t *testing.T) {
	_, pg := run(t, cases(t)[1], func(info *framework.Info) {
		ps := &info.PodSets[0]
		ps.Count = 4
		ps.Elastic = &framework.CountRange{Min: 2, Max: 6}
	})
	if pg.Spec.MinMember != 2 {
		t.Errorf("minMember %d, want the elastic minimum 2 (of 4 nodes, at most 6)", pg.Spec.MinMember)
	}
}

func TestTemplateSchedulerWins(t *testing.T) {
	c := cases(t)[1]
	c.Runtime = c.Runtime.DeepCopy()
	c.Runtime.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.SchedulerName = "volcano-gpu"
	info, _ := run(t, c)
	if got := info.PodSets[0].SchedulerName; got != "" {
		t.Errorf("Info schedulerName %q, want none: the template's volcano-gpu stays", got)
	}
}

func TestJobWithoutVolcanoIsLeftAlone(t *testing.T) {
	c := cases(t)[1]
	c.Runtime = c.Runtime.DeepCopy()
	c.Runtime.PodGroupPolicy = nil
	info, err := framework.NewInfo(c.Job, c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := json.Marshal(info)
	p := volcano.New()
	if err := p.EnforcePodGroupPolicy(context.Background(), info, c.Job); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(info)
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Errorf("Info changed (-before +after):\n%s", diff)
	}
	objs, err := p.Build(context.Background(), info, c.Job)
	if err != nil || len(objs) != 0 {
		t.Errorf("Build = %d objects, %v; want none", len(objs), err)
	}
}

func TestConfigure(t *testing.T) {
	for args, want := range map[string]string{
		``:                             "",
		`null`:                         "",
		`{"schedulerName": "volcano"}`: "",
		`{"scheduler": "volcano"}`:     `args: Invalid value: "{\"scheduler\": \"volcano\"}": json: unknown field "scheduler"; the args are {"schedulerName": "volcano"}`,
		`{"schedulerName": "Volcano"}`: `args.schedulerName: Invalid value: "Volcano": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
	} {
		got := ""
		if err := volcano.New().Configure(context.Background(), json.RawMessage(args)); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("Configure(%s) = %q, want %q", args, got, want)
		}
	}
}
