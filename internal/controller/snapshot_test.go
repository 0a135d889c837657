package controller

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// infoBuilder builds one JobSet that records, in annotations, the trainer
// image and numNodes that Info carries, so a test sees which runtime the
// job was built from. It follows the TrainJob's suspension, reports the
// JobSet's existence as jobsStatus, and notes whether it was ever handed a
// TrainJob carrying a snapshot.
type infoBuilder struct {
	fail        bool
	sawSnapshot bool
}

func (*infoBuilder) Describe() framework.Description {
	return framework.Description{Name: "InfoBuilder", MLPolicyKeys: []string{framework.NoPolicyKey}, Builds: []schema.GroupVersionKind{jobSetGVK}}
}

func (b *infoBuilder) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	b.sawSnapshot = b.sawSnapshot || job.Status.RuntimeSnapshot != nil
	if b.fail {
		return nil, errBoom
	}
	policy, err := info.MLPolicy()
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(jobSetGVK)
	u.SetName(job.Name)
	u.SetAnnotations(map[string]string{
		"image":    info.PodSets[0].Containers[0].Image,
		"numNodes": strconv.Itoa(int(ptr.Deref(policy.NumNodes, 0))),
	})
	_ = unstructured.SetNestedField(u.Object, job.IsSuspended(), "spec", "suspend")
	return framework.Apply(u), nil
}

func (b *infoBuilder) Status(_ context.Context, _ *framework.Info, job *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	b.sawSnapshot = b.sawSnapshot || job.Status.RuntimeSnapshot != nil
	if len(owned) == 0 {
		return nil, nil
	}
	return &framework.StatusReport{JobsStatus: []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1)}}}, nil
}

// imageRuntime is a cluster runtime with one trainer step running image on
// numNodes nodes.
func imageRuntime(name, image string, numNodes int32) *trainer.ClusterTrainingRuntime {
	rt := &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}}
	rt.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To(numNodes)}
	rj := jobsetv1alpha2.ReplicatedJob{Name: "node", Replicas: 1}
	rj.Template.Labels = map[string]string{trainer.AncestorStepLabel: trainer.TrainerStep}
	rj.Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: image}}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{rj}
	return rt
}

// built returns the image and numNodes the job's JobSet was built with, and
// whether it is suspended.
func (f *fixture) built(t *testing.T, name string) (image, numNodes string, suspended bool) {
	t.Helper()
	js := &jobsetv1alpha2.JobSet{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, js); err != nil {
		t.Fatal(err)
	}
	return js.Annotations["image"], js.Annotations["numNodes"], ptr.Deref(js.Spec.Suspend, false)
}

func (f *fixture) setSuspend(t *testing.T, name string, suspend bool) {
	t.Helper()
	job := f.job(t, name)
	job.Spec.Suspend = ptr.To(suspend)
	if err := f.client.Update(context.Background(), job); err != nil {
		t.Fatal(err)
	}
}

// editRuntime gives a cluster runtime a new image and numNodes.
func (f *fixture) editRuntime(t *testing.T, name, image string, numNodes int32) {
	t.Helper()
	rt := &trainer.ClusterTrainingRuntime{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Name: name}, rt); err != nil {
		t.Fatal(err)
	}
	rt.Spec = imageRuntime(name, image, numNodes).Spec
	rt.Generation++
	if err := f.client.Update(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotIsRecordedAtTheFirstReconcile(t *testing.T) {
	namespaced := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "local", Generation: 4}, Spec: imageRuntime("local", "local:1", 3).Spec}
	for name, tc := range map[string]struct {
		kind    string
		suspend bool
		fail    bool
	}{
		"running":             {kind: trainer.ClusterTrainingRuntimeKind},
		"suspended (queued)":  {kind: trainer.ClusterTrainingRuntimeKind, suspend: true},
		"failing in a plugin": {kind: trainer.ClusterTrainingRuntimeKind, fail: true},
		"namespaced runtime":  {kind: trainer.TrainingRuntimeKind},
	} {
		t.Run(name, func(t *testing.T) {
			cluster := imageRuntime("torch", "torch:1", 2)
			cluster.Generation = 6
			job := trainJobOf("job", "torch")
			job.Spec.Suspend = ptr.To(tc.suspend)
			want := &trainer.RuntimeSnapshot{APIGroup: trainer.GroupVersion.Group, Kind: tc.kind, Name: "torch", Generation: 6, Spec: cluster.Spec}
			if tc.kind == trainer.TrainingRuntimeKind {
				job.Spec.RuntimeRef = trainer.RuntimeRef{Name: "local", Kind: ptr.To(trainer.TrainingRuntimeKind)}
				want = &trainer.RuntimeSnapshot{APIGroup: trainer.GroupVersion.Group, Kind: tc.kind, Name: "local", Generation: 4, Spec: namespaced.Spec}
			}
			b := &infoBuilder{fail: tc.fail}
			f := newFixtureOf(t, b, cluster, namespaced.DeepCopy(), job)

			err := f.reconcile(t, "job")
			if tc.fail != (err != nil) {
				t.Fatalf("reconcile error = %v, want one: %v", err, tc.fail)
			}
			got := f.job(t, "job")
			if diff := cmp.Diff(want, got.Status.RuntimeSnapshot); diff != "" {
				t.Errorf("snapshot (-want +got):\n%s", diff)
			}
			wantCreated := metav1.ConditionTrue
			if tc.fail {
				wantCreated = metav1.ConditionFalse
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, trainer.TrainJobCreated); c == nil || c.Status != wantCreated {
				t.Errorf("Created condition = %+v, want status %s", c, wantCreated)
			}
			if b.sawSnapshot {
				t.Error("a plugin was handed the TrainJob with its snapshot; plugins get the runtime through Info")
			}
		})
	}
}

// The job resolved its runtime once: an edit (image, numNodes) reaches
// neither a suspended job's JobSet when it is re-applied nor its resume,
// while a new TrainJob gets the edited runtime.
func TestSnapshotIsUsedInsteadOfTheEditedRuntime(t *testing.T) {
	job := trainJobOf("job", "torch")
	job.Spec.Suspend = ptr.To(true)
	f := newFixtureOf(t, &infoBuilder{}, imageRuntime("torch", "torch:1", 2), job)
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	f.editRuntime(t, "torch", "torch:2", 5)
	f.setSuspend(t, "job", false)
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if image, numNodes, suspended := f.built(t, "job"); image != "torch:1" || numNodes != "2" || suspended {
		t.Errorf("resumed JobSet built with image %q, numNodes %s, suspended %v; want torch:1, 2, running", image, numNodes, suspended)
	}
	if g := f.job(t, "job").Status.RuntimeSnapshot.Generation; g != 1 {
		t.Errorf("snapshot generation = %d, want 1: the snapshot was rewritten", g)
	}

	if err := f.client.Create(context.Background(), trainJobOf("new", "torch")); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, "new"); err != nil {
		t.Fatal(err)
	}
	if image, numNodes, _ := f.built(t, "new"); image != "torch:2" || numNodes != "5" {
		t.Errorf("a new TrainJob was built with image %q, numNodes %s; want the edited torch:2, 5", image, numNodes)
	}
}

// With its snapshot a job outlives its runtime: it is suspended, resumed
// and reconciled as before, and waits for nothing.
func TestDeletedRuntimeWithSnapshot(t *testing.T) {
	rt := imageRuntime("torch", "torch:1", 2)
	f := newFixtureOf(t, &infoBuilder{}, rt, trainJobOf("job", "torch"))
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	for _, suspend := range []bool{true, false} {
		f.setSuspend(t, "job", suspend)
		if err := f.reconcile(t, "job"); err != nil {
			t.Fatalf("suspend %v: %v", suspend, err)
		}
		if image, numNodes, suspended := f.built(t, "job"); image != "torch:1" || numNodes != "2" || suspended != suspend {
			t.Errorf("suspend %v: JobSet has image %q, numNodes %s, suspended %v", suspend, image, numNodes, suspended)
		}
		got := f.job(t, "job")
		if c := meta.FindStatusCondition(got.Status.Conditions, trainer.TrainJobCreated); c == nil || c.Reason != trainer.TrainJobJobsCreatedReason {
			t.Errorf("suspend %v: Created condition = %+v, want JobsCreated", suspend, c)
		}
		wantReason := map[bool]string{true: trainer.TrainJobSuspendedReason, false: trainer.TrainJobResumedReason}[suspend]
		if c := meta.FindStatusCondition(got.Status.Conditions, trainer.TrainJobSuspended); c == nil || c.Reason != wantReason {
			t.Errorf("suspend %v: Suspended condition = %+v, want reason %s", suspend, c, wantReason)
		}
	}
}

// TrainJobs created before snapshots existed take one at their next
// reconcile, from the runtime as it is then; finished ones are left alone.
func TestMigrationOfAJobWithoutSnapshot(t *testing.T) {
	created := metav1.Condition{Type: trainer.TrainJobCreated, Status: metav1.ConditionTrue, Reason: trainer.TrainJobJobsCreatedReason, LastTransitionTime: metav1.Now()}
	running := trainJobOf("running", "torch")
	running.Status.Conditions = []metav1.Condition{created}
	done := trainJobOf("done", "torch")
	done.Status.Conditions = []metav1.Condition{created, {Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", LastTransitionTime: metav1.Now()}}
	rt := imageRuntime("torch", "torch:2", 3)
	rt.Generation = 9
	f := newFixtureOf(t, &infoBuilder{}, rt, running, done)

	for _, name := range []string{"running", "done"} {
		if err := f.reconcile(t, name); err != nil {
			t.Fatal(err)
		}
	}
	snap := f.job(t, "running").Status.RuntimeSnapshot
	if snap == nil || snap.Generation != 9 || snap.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image != "torch:2" {
		t.Errorf("running job's snapshot = %+v, want one of generation 9 with image torch:2", snap)
	}
	if snap := f.job(t, "done").Status.RuntimeSnapshot; snap != nil {
		t.Errorf("a finished job took a snapshot: %+v", snap)
	}
}

// A job started before snapshots existed whose runtime was deleted since
// can take no snapshot: it follows the objects it has, as it did before.
func TestMigrationOfAJobWhoseRuntimeIsGone(t *testing.T) {
	rt := imageRuntime("torch", "torch:1", 2)
	f := newFixtureOf(t, &infoBuilder{}, rt, trainJobOf("job", "torch"))
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	// As the job was before the upgrade: created, without snapshot.
	job := f.job(t, "job")
	job.Status.RuntimeSnapshot = nil
	job.Status.JobsStatus = nil
	if err := f.client.Status().Update(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if err := f.client.Delete(context.Background(), rt); err != nil {
		t.Fatal(err)
	}

	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	got := f.job(t, "job")
	if c := meta.FindStatusCondition(got.Status.Conditions, trainer.TrainJobCreated); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Created condition = %+v, want it left True", c)
	}
	if len(got.Status.JobsStatus) != 1 {
		t.Errorf("jobsStatus = %+v, want the status plugin's report of the JobSet", got.Status.JobsStatus)
	}
	if got.Status.RuntimeSnapshot != nil {
		t.Errorf("snapshot = %+v, want none", got.Status.RuntimeSnapshot)
	}
}

// Only a hand-edited status can hold a snapshot of another runtime than
// runtimeRef names: the controller builds nothing from it and says why.
func TestMismatchedSnapshot(t *testing.T) {
	job := trainJobOf("job", "torch")
	job.Status.RuntimeSnapshot = &trainer.RuntimeSnapshot{APIGroup: trainer.GroupVersion.Group, Kind: trainer.ClusterTrainingRuntimeKind, Name: "jax", Spec: imageRuntime("jax", "jax:1", 1).Spec}
	f := newFixtureOf(t, &infoBuilder{}, imageRuntime("torch", "torch:1", 2), job)

	err := f.reconcile(t, "job")
	if err == nil {
		t.Fatal("reconcile succeeded; it must fail so that a repaired status is picked up by the retry")
	}
	got := f.job(t, "job")
	c := meta.FindStatusCondition(got.Status.Conditions, trainer.TrainJobCreated)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != trainer.TrainJobRuntimeSnapshotMismatchReason ||
		!strings.Contains(c.Message, `status.runtimeSnapshot: Invalid value: "ClusterTrainingRuntime/jax"`) ||
		!strings.Contains(c.Message, `spec.runtimeRef names ClusterTrainingRuntime "torch"`) {
		t.Errorf("Created condition = %+v, want False, RuntimeSnapshotMismatch, naming both runtimes", c)
	}
	if got.Status.RuntimeSnapshot.Name != "jax" {
		t.Errorf("the controller rewrote the snapshot: %+v", got.Status.RuntimeSnapshot)
	}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, &jobsetv1alpha2.JobSet{}); err == nil {
		t.Error("a JobSet was built from a mismatched snapshot")
	}
	if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning RuntimeSnapshotMismatch") {
		t.Errorf("events = %q, want one Warning RuntimeSnapshotMismatch", ev)
	}
}

// A runtime event wakes only the TrainJobs that may still read the
// runtime: those without snapshot that have not finished.
func TestRuntimeWatchEnqueuesOnlyTrainJobsWithoutSnapshot(t *testing.T) {
	waiting := trainJobOf("waiting", "torch")
	pinned := trainJobOf("pinned", "torch")
	pinned.Status.RuntimeSnapshot = &trainer.RuntimeSnapshot{APIGroup: trainer.GroupVersion.Group, Kind: trainer.ClusterTrainingRuntimeKind, Name: "torch"}
	finished := trainJobOf("finished", "torch")
	finished.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobFailed, Status: metav1.ConditionTrue, Reason: "FailedJobs", LastTransitionTime: metav1.Now()}}
	other := trainJobOf("other", "jax")
	f := newFixtureOf(t, &infoBuilder{}, waiting, pinned, finished, other)
	scheme := f.client.Scheme()
	f.r.Client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(waiting, pinned, finished, other).
		WithIndex(&trainer.TrainJob{}, runtimeRefIndex, indexByRuntime).Build()

	var got []string
	for _, req := range f.r.waitingFor(trainer.ClusterTrainingRuntimeKind)(context.Background(), imageRuntime("torch", "torch:1", 1)) {
		got = append(got, req.Name)
	}
	if diff := cmp.Diff([]string{"waiting"}, got); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
}

// A runtime too large to be carried in the status is refused before
// anything is built: its objects would otherwise run unpinned while every
// status update failed.
func TestOversizedRuntimeIsNotSnapshotted(t *testing.T) {
	rt := imageRuntime("huge", "torch:1", 1)
	c := &rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
	c.Env = []corev1.EnvVar{{Name: "SCRIPT", Value: strings.Repeat("x", 1<<20)}}
	f := newFixtureOf(t, &infoBuilder{}, rt, trainJobOf("job", "huge"))

	if err := f.reconcile(t, "job"); err == nil {
		t.Fatal("reconcile succeeded")
	}
	got := f.job(t, "job")
	c0 := meta.FindStatusCondition(got.Status.Conditions, trainer.TrainJobCreated)
	if c0 == nil || c0.Reason != trainer.TrainJobBuildFailedReason || !strings.Contains(c0.Message, `ClusterTrainingRuntime "huge": spec: Invalid value:`) {
		t.Errorf("Created condition = %+v, want JobsBuildFailed naming the runtime and its spec", c0)
	}
	if got.Status.RuntimeSnapshot != nil {
		t.Error("the oversized runtime was snapshotted")
	}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, &jobsetv1alpha2.JobSet{}); err == nil {
		t.Error("a JobSet was built")
	}
}
