package jobset

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// elasticBuild builds the seed Torch job's JobSet with its trainer step
// elastic in [2, 4] and count nodes; labels go on the TrainJob.
func elasticBuild(t *testing.T, count int32, labels ...string) framework.Object {
	t.Helper()
	obj, _ := elasticBuildInfo(t, count, labels...)
	return obj
}

// elasticBuildInfo is elasticBuild, which also returns the Info the JobSet
// was built from.
func elasticBuildInfo(t *testing.T, count int32, labels ...string) (framework.Object, *framework.Info) {
	t.Helper()
	spec, job := load(t, frameworktest.SeedTorch, "", "")
	for i := 0; i+1 < len(labels); i += 2 {
		framework.MergeMap(&job.Labels, map[string]string{labels[i]: labels[i+1]})
	}
	info := newInfo(t, job, spec, func(info *framework.Info) {
		ps := info.TrainerPodSet()
		ps.Count = count
		ps.Elastic = &framework.CountRange{Min: 2, Max: 4}
	})
	objs, err := New().(framework.Builder).Build(context.Background(), info, job)
	if err != nil {
		t.Fatal(err)
	}
	return objs[0], info
}

func TestBuildElastic(t *testing.T) {
	built := elasticBuild(t, 3)
	js := decodeJobSet(t, built.Unstructured)
	// Status reads the range from Info: the JobSet carries no state of
	// the plugin's.
	if got, ok := js.Annotations[ElasticAnnotation]; ok {
		t.Errorf("annotation %s = %q; the range is read from Info, not stored on the JobSet", ElasticAnnotation, got)
	}
	if built.Live == nil {
		t.Fatal("an elastic JobSet has no live fields")
	}
	if diff := cmp.Diff([]string{"/spec/replicatedJobs/0/template/spec/parallelism", "/spec/replicatedJobs/0/template/spec/completions"}, built.Live.Paths); diff != "" {
		t.Errorf("live fields (-want +got):\n%s", diff)
	}
	if built.Live.Held != "" || !strings.Contains(built.Live.Advice, ElasticFeatureGate) {
		t.Errorf("live fields held %q, advice %q; want not held, the advice naming %s", built.Live.Held, built.Live.Advice, ElasticFeatureGate)
	}
	rj := js.Spec.ReplicatedJobs[0]
	if rj.Name != "trainer-node" || ptr.Deref(rj.Template.Spec.Parallelism, 0) != 3 || ptr.Deref(rj.Template.Spec.Completions, 0) != 3 {
		t.Errorf("replicatedJob %s parallelism %v completions %v, want trainer-node 3 and 3", rj.Name, rj.Template.Spec.Parallelism, rj.Template.Spec.Completions)
	}
	if cm := rj.Template.Spec.CompletionMode; cm == nil || *cm != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", cm)
	}
	// Resizing changes the live fields and nothing else.
	other := decodeJobSet(t, elasticBuild(t, 4).Unstructured)
	other.Spec.ReplicatedJobs[0].Template.Spec.Parallelism = ptr.To[int32](3)
	other.Spec.ReplicatedJobs[0].Template.Spec.Completions = ptr.To[int32](3)
	if diff := cmp.Diff(js, other); diff != "" {
		t.Errorf("JobSets of 3 and 4 nodes differ beyond parallelism and completions (-3 +4):\n%s", diff)
	}
}

func TestBuildNotElasticUnmarked(t *testing.T) {
	spec, job := load(t, frameworktest.SeedTorch, "", "")
	info := newInfo(t, job, spec, nil)
	objs, err := New().(framework.Builder).Build(context.Background(), info, job)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := objs[0].GetAnnotations()[ElasticAnnotation]; ok {
		t.Errorf("a job without an elastic PodSet has annotation %s", ElasticAnnotation)
	}
	if objs[0].Live != nil {
		t.Errorf("a job without an elastic PodSet has live fields %+v", objs[0].Live)
	}
}

// A TrainJob in a Kueue queue keeps its size while it runs: its live
// fields are held, with Kueue's way to the new size as the advice.
func TestBuildElasticInAKueueQueueIsHeld(t *testing.T) {
	built := elasticBuild(t, 3, KueueQueueNameLabel, "team-a")
	if built.Live == nil || len(built.Live.Paths) != 2 {
		t.Fatalf("live fields %+v, want the elastic Job's parallelism and completions", built.Live)
	}
	if !strings.Contains(built.Live.Held, `Kueue queue "team-a"`) || !strings.Contains(built.Live.Advice, "Kueue stops (suspends) the TrainJob") {
		t.Errorf("live fields held %q, advice %q; want held for queue team-a, with Kueue's advice", built.Live.Held, built.Live.Advice)
	}
}

func TestBuildElasticReplicas(t *testing.T) {
	spec, job := load(t, frameworktest.SeedTorch, "", "")
	info := newInfo(t, job, spec, func(info *framework.Info) {
		ps := info.TrainerPodSet()
		ps.Replicas = 2
		ps.Elastic = &framework.CountRange{Min: 1, Max: 4}
	})
	_, err := New().(framework.Builder).Build(context.Background(), info, job)
	if err == nil || !framework.IsInvalidJob(err) {
		t.Errorf("Build of an elastic step with 2 replicas: %v, want an invalid job", err)
	}
}

func TestStatusNodes(t *testing.T) {
	built, info := elasticBuildInfo(t, 3)
	u := built.Unstructured
	u.SetNamespace("default")
	last := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: "default"}}
	job.Status.Nodes = &trainer.NodesStatus{Current: 2, LastResizeTime: &last}
	st, err := New().(framework.StatusReporter).Status(context.Background(), info, job, []*unstructured.Unstructured{u})
	if err != nil {
		t.Fatal(err)
	}
	want := &trainer.NodesStatus{
		Current:        3,
		Selector:       "jobset.sigs.k8s.io/jobset-name=" + u.GetName() + ",jobset.sigs.k8s.io/replicatedjob-name=trainer-node",
		MinNodes:       ptr.To[int32](2),
		MaxNodes:       ptr.To[int32](4),
		Range:          "2:4",
		LastResizeTime: &last,
	}
	if diff := cmp.Diff(want, st.Nodes); diff != "" {
		t.Errorf("status.nodes (-want +got):\n%s", diff)
	}
}

// TestStatusInfo: the size of an elastic job comes from the Info the
// JobSet was built from (protocol 1.5), never from the annotation that
// controllers before it wrote: a JobSet that still carries one, with a
// range of its own, reports Info's range, and none at all without Info or
// when Info's PodSet is not elastic.
func TestStatusInfo(t *testing.T) {
	built, elastic := elasticBuildInfo(t, 3)
	spec, seed := load(t, frameworktest.SeedTorch, "", "")
	notElastic := newInfo(t, seed, spec, nil)
	otherStep := newInfo(t, seed, spec, func(info *framework.Info) {
		info.TrainerPodSet().Name = "not-in-the-jobset"
		info.TrainerPodSet().Elastic = &framework.CountRange{Min: 1, Max: 8}
	})
	u := built.Unstructured
	u.SetNamespace("default")
	// As an earlier controller wrote it: another range, to tell them apart.
	u.SetAnnotations(map[string]string{ElasticAnnotation: `{"replicatedJob":"trainer-node","min":1,"max":9}`})
	job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: "default"}}
	for _, tc := range []struct {
		name string
		info *framework.Info
		want *trainer.NodesStatus
	}{
		{"elastic Info", elastic, &trainer.NodesStatus{
			Current:  3,
			Selector: "jobset.sigs.k8s.io/jobset-name=" + u.GetName() + ",jobset.sigs.k8s.io/replicatedjob-name=trainer-node",
			MinNodes: ptr.To[int32](2), MaxNodes: ptr.To[int32](4), Range: "2:4",
		}},
		{"no Info", nil, nil},
		{"Info not elastic", notElastic, nil},
		{"Info's elastic PodSet not in the JobSet", otherStep, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := New().(framework.StatusReporter).Status(context.Background(), tc.info, job, []*unstructured.Unstructured{u.DeepCopy()})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, st.Nodes); diff != "" {
				t.Errorf("status.nodes (-want +got):\n%s", diff)
			}
			// The rest of the status does not depend on Info.
			without, err := New().(framework.StatusReporter).Status(context.Background(), nil, job, []*unstructured.Unstructured{u.DeepCopy()})
			if err != nil {
				t.Fatal(err)
			}
			st.Nodes = nil
			if diff := cmp.Diff(without, st); diff != "" {
				t.Errorf("status beyond nodes differs with Info (-without +with):\n%s", diff)
			}
		})
	}
}

func decodeJobSet(t *testing.T, u *unstructured.Unstructured) *jobsetv1alpha2.JobSet {
	t.Helper()
	js := &jobsetv1alpha2.JobSet{}
	if err := framework.FromUnstructured(u, js); err != nil {
		t.Fatal(err)
	}
	return js
}

// An elastic step's lost pod is replaced by its Job, not counted and
// without a restart of the job (podFailurePolicy Ignore on
// DisruptionTarget); the same restart policy restarts a fixed-size job.
func TestElasticStepIgnoresPodDisruptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		elastic bool
		want    batchv1.PodFailurePolicyAction
	}{
		{"elastic", true, batchv1.PodFailurePolicyActionIgnore},
		{"fixed size", false, batchv1.PodFailurePolicyActionFailJob},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := load(t, frameworktest.SeedTorch, "", "")
			info := newInfo(t, job, spec, func(info *framework.Info) {
				if tc.elastic {
					info.TrainerPodSet().Elastic = &framework.CountRange{Min: 2, Max: 4}
				}
				info.RestartPolicy = &trainer.RestartPolicy{MaxRestarts: ptr.To[int32](2)}
			})
			objs, err := New().(framework.Builder).Build(context.Background(), info, job)
			if err != nil {
				t.Fatal(err)
			}
			js := decodeJobSet(t, objs[0].Unstructured)
			pfp := js.Spec.ReplicatedJobs[0].Template.Spec.PodFailurePolicy
			if pfp == nil || len(pfp.Rules) == 0 {
				t.Fatalf("no podFailurePolicy on the trainer Job: %+v", pfp)
			}
			last := pfp.Rules[len(pfp.Rules)-1]
			if len(last.OnPodConditions) != 1 || last.OnPodConditions[0].Type != "DisruptionTarget" {
				t.Fatalf("the last podFailurePolicy rule is %+v, want the DisruptionTarget rule", last)
			}
			if last.Action != tc.want {
				t.Errorf("a pod disruption of the %s trainer step: action %s, want %s", tc.name, last.Action, tc.want)
			}
			if js.Spec.FailurePolicy == nil || js.Spec.FailurePolicy.MaxRestarts != 2 {
				t.Errorf("failurePolicy %+v, want maxRestarts 2 (the budget is kept for other failures)", js.Spec.FailurePolicy)
			}
		})
	}
}
