package webhook

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin/builtintest"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

func builtins(t *testing.T) *frameworkruntime.Framework {
	return builtintest.Framework(t, builtintest.Pipeline...)
}

func runtimeSpec(mlPolicy *trainer.MLPolicy) trainer.TrainingRuntimeSpec {
	spec := trainer.TrainingRuntimeSpec{MLPolicy: mlPolicy}
	rj := jobsetv1alpha2.ReplicatedJob{Name: "node", Replicas: 1}
	rj.Template.Labels = map[string]string{trainer.AncestorStepLabel: trainer.TrainerStep}
	rj.Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "busybox"}}
	spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{rj}
	return spec
}

// A runtime can carry a key that no plugin owns when it was created before
// the plugin was disabled; its TrainJobs are then refused.
func TestTrainJobOnARuntimeWithAnUnownedKey(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := trainer.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	rt := &trainer.ClusterTrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: "deepspeed"},
		Spec:       runtimeSpec(&trainer.MLPolicy{Extra: map[string]apiextensionsv1.JSON{"deepspeed": {Raw: []byte(`{}`)}}}),
	}
	v := &TrainJobValidator{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(rt).Build(), Framework: builtins(t)}
	job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
	job.Spec.RuntimeRef.Name = "deepspeed"

	_, err := v.ValidateCreate(context.Background(), job)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"spec.runtimeRef", "mlPolicy.deepspeed", "no enabled plugin owns this key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestRuntimeValidation(t *testing.T) {
	for name, tc := range map[string]struct {
		mlPolicy *trainer.MLPolicy
		want     string // empty: accepted
	}{
		"plain": {},
		"torch auto": {
			mlPolicy: &trainer.MLPolicy{MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{NumProcPerNode: ptr.To(intstr.FromString("auto"))}}},
		},
		"torch bad numProcPerNode": {
			mlPolicy: &trainer.MLPolicy{MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{NumProcPerNode: ptr.To(intstr.FromString("abc"))}}},
			want:     "spec.mlPolicy.torch.numProcPerNode",
		},
		"unowned vendor key": {
			mlPolicy: &trainer.MLPolicy{Extra: map[string]apiextensionsv1.JSON{"jaxpp": {Raw: []byte(`{}`)}}},
			want:     "spec.mlPolicy.jaxpp",
		},
		"mpi is not built in": {
			mlPolicy: &trainer.MLPolicy{MLPolicySource: trainer.MLPolicySource{MPI: &trainer.MPIMLPolicySource{}}},
			want:     "spec.mlPolicy.mpi",
		},
	} {
		t.Run(name, func(t *testing.T) {
			v := typedRuntime[*trainer.ClusterTrainingRuntime]{&RuntimeValidator{Framework: builtins(t)}}
			rt := &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "rt"}, Spec: runtimeSpec(tc.mlPolicy)}
			_, err := v.ValidateCreate(context.Background(), rt)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error = %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// An update is checked against the runtime the TrainJob runs with, its
// snapshot, not against the live runtime: here the snapshot carries a key
// no plugin owns, the live runtime does not.
func TestTrainJobUpdateIsValidatedAgainstItsSnapshot(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := trainer.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	live := &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "rt"}, Spec: runtimeSpec(nil)}
	v := &TrainJobValidator{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(live).Build(), Framework: builtins(t)}
	snapshotted := runtimeSpec(&trainer.MLPolicy{Extra: map[string]apiextensionsv1.JSON{"deepspeed": {Raw: []byte(`{}`)}}})
	newJob := func(snap *trainer.RuntimeSnapshot) *trainer.TrainJob {
		job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
		job.Spec.RuntimeRef.Name = "rt"
		job.Status.RuntimeSnapshot = snap
		return job
	}
	ofRT := &trainer.RuntimeSnapshot{APIGroup: trainer.GroupVersion.Group, Kind: trainer.ClusterTrainingRuntimeKind, Name: "rt", Spec: snapshotted}
	ofOther := &trainer.RuntimeSnapshot{APIGroup: trainer.GroupVersion.Group, Kind: trainer.ClusterTrainingRuntimeKind, Name: "other", Spec: snapshotted}

	if w, err := v.ValidateCreate(context.Background(), newJob(nil)); err != nil || len(w) > 0 {
		t.Errorf("create against the live runtime: warnings %q, error %v; want neither", w, err)
	}
	if w, err := v.ValidateUpdate(context.Background(), newJob(nil), newJob(nil)); err != nil || len(w) > 0 {
		t.Errorf("update of a TrainJob without snapshot, against the live runtime: warnings %q, error %v; want neither", w, err)
	}
	_, err := v.ValidateUpdate(context.Background(), newJob(ofRT), newJob(ofRT))
	if err == nil || !strings.Contains(err.Error(), "mlPolicy.deepspeed") {
		t.Errorf("update against the snapshot: error %v, want one naming mlPolicy.deepspeed", err)
	}
	w, err := v.ValidateUpdate(context.Background(), newJob(ofOther), newJob(ofOther))
	if err != nil || len(w) != 1 || !strings.Contains(w[0], "status.runtimeSnapshot") || !strings.Contains(w[0], `spec.runtimeRef names ClusterTrainingRuntime "rt"`) {
		t.Errorf("update with a snapshot of another runtime: warnings %q, error %v; want only a warning naming status.runtimeSnapshot", w, err)
	}
}

// Once a TrainJob has its snapshot, its runtime may go: updates, such as
// a resume, are still accepted and checked, without warnings.
func TestTrainJobUpdateAfterItsRuntimeIsDeleted(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := trainer.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	v := &TrainJobValidator{Client: fake.NewClientBuilder().WithScheme(scheme).Build(), Framework: builtins(t)}
	torch := runtimeSpec(&trainer.MLPolicy{MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}})
	job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
	job.Spec.RuntimeRef.Name = "gone"
	job.Spec.Suspend = ptr.To(true)
	job.Status.RuntimeSnapshot = &trainer.RuntimeSnapshot{APIGroup: trainer.GroupVersion.Group, Kind: trainer.ClusterTrainingRuntimeKind, Name: "gone", Spec: torch}
	resumed := job.DeepCopy()
	resumed.Spec.Suspend = ptr.To(false)

	if w, err := v.ValidateUpdate(context.Background(), job, resumed); err != nil || len(w) > 0 {
		t.Errorf("resume: warnings %q, error %v; want neither", w, err)
	}
	// The torch plugin's checks still run, from the snapshot.
	resumed.Spec.Trainer = &trainer.Trainer{Env: []corev1.EnvVar{{Name: "PET_NNODES", Value: "9"}}}
	if _, err := v.ValidateUpdate(context.Background(), job, resumed); err == nil || !strings.Contains(err.Error(), "spec.trainer.env[0].name") {
		t.Errorf("error = %v, want one naming spec.trainer.env[0].name", err)
	}
	// Without the snapshot the same update only warns that the runtime is missing.
	job.Status.RuntimeSnapshot = nil
	if w, err := v.ValidateUpdate(context.Background(), job, resumed); err != nil || len(w) != 1 || !strings.Contains(w[0], "does not exist yet") {
		t.Errorf("without snapshot: warnings %q, error %v; want the missing-runtime warning", w, err)
	}
}

// Every TrainJob carries its runtime's spec in its status: a runtime too
// large for that is refused up front.
func TestRuntimeTooLargeToBeSnapshotted(t *testing.T) {
	v := typedRuntime[*trainer.TrainingRuntime]{&RuntimeValidator{Framework: builtins(t)}}
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rt"}, Spec: runtimeSpec(nil)}
	c := &rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
	c.Env = []corev1.EnvVar{{Name: "SCRIPT", Value: strings.Repeat("x", 1<<20)}}
	_, err := v.ValidateCreate(context.Background(), rt)
	if err == nil || !strings.Contains(err.Error(), "spec: Invalid value:") || !strings.Contains(err.Error(), "must be at most 1048576 bytes of JSON") {
		t.Errorf("error = %v, want one naming spec and the bound", err)
	}
}
