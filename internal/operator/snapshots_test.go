package operator

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// pinnedTrainJob is a TrainJob as the API server returns it once the
// controller has taken its snapshot of runtime kind/name at generation 3.
func pinnedTrainJob(namespace, name, kind string) *trainer.TrainJob {
	return &trainer.TrainJob{
		TypeMeta: metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: "TrainJob"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "trainforge", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "torch", Kind: ptr.To(kind)}},
		Status: trainer.TrainJobStatus{RuntimeSnapshot: &trainer.RuntimeSnapshot{
			APIGroup: trainer.GroupVersion.Group, Kind: kind, Name: "torch", Generation: 3,
			Spec: trainer.TrainingRuntimeSpec{
				MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](4), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
				Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{{
					Name: "node", Replicas: 1,
					Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "node", Image: "pytorch", Command: []string{"torchrun", "train.py"}}},
					}}}},
				}}}},
			},
		}},
	}
}

// decoded returns job as an informer gets it: decoded from the wire, its
// own memory.
func decoded(t *testing.T, job *trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	data, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	out := &trainer.TrainJob{}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func cached(t *testing.T, s *snapshotInterner, job *trainer.TrainJob) *trainer.TrainJob {
	t.Helper()
	got, err := s.Transform(decoded(t, job))
	if err != nil {
		t.Fatalf("Transform: %v", err)
	}
	return got.(*trainer.TrainJob)
}

// sharesSnapshot says whether two cached TrainJobs hold the same copy of
// their snapshot's pod template.
func sharesSnapshot(a, b *trainer.TrainJob) bool {
	ra := a.Status.RuntimeSnapshot.Spec.Template.Spec.ReplicatedJobs
	rb := b.Status.RuntimeSnapshot.Spec.Template.Spec.ReplicatedJobs
	return &ra[0] == &rb[0] && a.Status.RuntimeSnapshot.Spec.MLPolicy == b.Status.RuntimeSnapshot.Spec.MLPolicy
}

func TestTrainJobsOfOneRuntimeShareTheirSnapshotInTheCache(t *testing.T) {
	s := newSnapshotInterner()
	a := cached(t, s, pinnedTrainJob("ns", "a", trainer.ClusterTrainingRuntimeKind))
	b := cached(t, s, pinnedTrainJob("other", "b", trainer.ClusterTrainingRuntimeKind))
	if !sharesSnapshot(a, b) {
		t.Error("two TrainJobs of ClusterTrainingRuntime torch at generation 3 hold two copies of its snapshot, want one")
	}
	want := pinnedTrainJob("other", "b", trainer.ClusterTrainingRuntimeKind)
	want.ManagedFields = nil
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("cached TrainJob differs from the API server's without managedFields (-want +got):\n%s", diff)
	}

	// A reconcile's copy is its own: changing it changes no other.
	mine := b.DeepCopy()
	mine.Status.RuntimeSnapshot.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image = "changed"
	if got := a.Status.RuntimeSnapshot.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image; got != "pytorch" {
		t.Errorf("a deep copy of one cached TrainJob changed another's snapshot: image %q", got)
	}
}

func TestSnapshotsThatDifferAreNotShared(t *testing.T) {
	for name, change := range map[string]func(*trainer.TrainJob){
		"another generation": func(j *trainer.TrainJob) { j.Status.RuntimeSnapshot.Generation = 4 },
		"another runtime":    func(j *trainer.TrainJob) { j.Status.RuntimeSnapshot.Name = "jax" },
		"a status edited by hand": func(j *trainer.TrainJob) {
			j.Status.RuntimeSnapshot.Spec.MLPolicy.NumNodes = ptr.To[int32](8)
		},
		"a TrainingRuntime of the same name in another namespace": func(j *trainer.TrainJob) {},
	} {
		t.Run(name, func(t *testing.T) {
			kind := trainer.ClusterTrainingRuntimeKind
			if name == "a TrainingRuntime of the same name in another namespace" {
				kind = trainer.TrainingRuntimeKind
			}
			s := newSnapshotInterner()
			a := cached(t, s, pinnedTrainJob("ns", "a", kind))
			other := pinnedTrainJob("other", "b", kind)
			change(other)
			b := cached(t, s, other)
			if sharesSnapshot(a, b) {
				t.Errorf("%s: the cached TrainJobs share one snapshot, want each its own", name)
			}
			other.ManagedFields = nil
			if diff := cmp.Diff(other, b); diff != "" {
				t.Errorf("cached TrainJob differs from the API server's (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrainJobWithoutSnapshotIsCachedAsItIs(t *testing.T) {
	job := pinnedTrainJob("ns", "a", trainer.ClusterTrainingRuntimeKind)
	job.Status.RuntimeSnapshot = nil
	got := cached(t, newSnapshotInterner(), job)
	job.ManagedFields = nil
	if diff := cmp.Diff(job, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
