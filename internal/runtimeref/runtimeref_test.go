package runtimeref

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

func TestResolve(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := trainer.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cluster := &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "shared", Generation: 3}}
	cluster.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To[int32](1)}
	local := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shared", Generation: 7}}
	local.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To[int32](2)}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cluster, local).Build()
	get := func(ctx context.Context, key types.NamespacedName, obj Object) error {
		return reader.Get(ctx, key, obj)
	}

	for name, tc := range map[string]struct {
		ns       string
		ref      trainer.RuntimeRef
		want     *trainer.RuntimeSnapshot // its spec: numNodes only
		notFound bool
		err      string
	}{
		"cluster runtime by default": {ns: "team-a", ref: trainer.RuntimeRef{Name: "shared"},
			want: &trainer.RuntimeSnapshot{APIGroup: "trainer.kubeflow.org", Kind: "ClusterTrainingRuntime", Name: "shared", Generation: 3, Spec: cluster.Spec}},
		"namespaced runtime": {ns: "team-a", ref: trainer.RuntimeRef{Name: "shared", Kind: ptr.To(trainer.TrainingRuntimeKind)},
			want: &trainer.RuntimeSnapshot{APIGroup: "trainer.kubeflow.org", Kind: "TrainingRuntime", Name: "shared", Generation: 7, Spec: local.Spec}},
		"namespaced runtime of another namespace": {ns: "team-b", ref: trainer.RuntimeRef{Name: "shared", Kind: ptr.To(trainer.TrainingRuntimeKind)}, notFound: true},
		"missing":       {ns: "team-a", ref: trainer.RuntimeRef{Name: "nope"}, notFound: true},
		"unknown kind":  {ns: "team-a", ref: trainer.RuntimeRef{Name: "shared", Kind: ptr.To("JAXRuntime")}, err: `spec.runtimeRef.kind: Unsupported value: "JAXRuntime": supported values: "ClusterTrainingRuntime", "TrainingRuntime"`},
		"unknown group": {ns: "team-a", ref: trainer.RuntimeRef{Name: "shared", APIGroup: ptr.To("example.com")}, err: `spec.runtimeRef.apiGroup: Unsupported value: "example.com": supported values: "trainer.kubeflow.org"`},
	} {
		t.Run(name, func(t *testing.T) {
			job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: "job"}}
			job.Spec.RuntimeRef = tc.ref
			snap, err := Resolve(context.Background(), get, job)
			switch {
			case tc.notFound:
				if !apierrors.IsNotFound(err) {
					t.Errorf("error = %v, want NotFound", err)
				}
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error = %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if diff := cmp.Diff(tc.want, snap); diff != "" {
					t.Errorf("snapshot (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestCheckSnapshot(t *testing.T) {
	snapshotOf := func(group, kind, name string) *trainer.RuntimeSnapshot {
		return &trainer.RuntimeSnapshot{APIGroup: group, Kind: kind, Name: name}
	}
	for name, tc := range map[string]struct {
		ref  trainer.RuntimeRef
		snap *trainer.RuntimeSnapshot
		want string // empty: no error
	}{
		"no snapshot":              {ref: trainer.RuntimeRef{Name: "torch"}},
		"defaulted runtimeRef":     {ref: trainer.RuntimeRef{Name: "torch"}, snap: snapshotOf("trainer.kubeflow.org", "ClusterTrainingRuntime", "torch")},
		"explicit namespaced kind": {ref: trainer.RuntimeRef{Name: "torch", Kind: ptr.To("TrainingRuntime")}, snap: snapshotOf("trainer.kubeflow.org", "TrainingRuntime", "torch")},
		"another name": {ref: trainer.RuntimeRef{Name: "torch"}, snap: snapshotOf("trainer.kubeflow.org", "ClusterTrainingRuntime", "jax"),
			want: `status.runtimeSnapshot: Invalid value: "ClusterTrainingRuntime/jax": the snapshot is of ClusterTrainingRuntime "jax" (apiGroup trainer.kubeflow.org), but spec.runtimeRef names ClusterTrainingRuntime "torch" (apiGroup trainer.kubeflow.org); remove status.runtimeSnapshot (kubectl edit trainjob job --subresource=status)`},
		"another kind": {ref: trainer.RuntimeRef{Name: "torch"}, snap: snapshotOf("trainer.kubeflow.org", "TrainingRuntime", "torch"),
			want: `the snapshot is of TrainingRuntime "torch"`},
		"another group": {ref: trainer.RuntimeRef{Name: "torch"}, snap: snapshotOf("example.com", "ClusterTrainingRuntime", "torch"),
			want: `(apiGroup example.com), but spec.runtimeRef names`},
	} {
		t.Run(name, func(t *testing.T) {
			job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
			job.Spec.RuntimeRef = tc.ref
			job.Status.RuntimeSnapshot = tc.snap
			err := CheckSnapshot(job)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error = %v, want none", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestWithoutSnapshotLeavesTheTrainJobAsItIs(t *testing.T) {
	job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "job"}}
	job.Status.RuntimeSnapshot = &trainer.RuntimeSnapshot{Name: "torch"}
	view := WithoutSnapshot(job)
	if view.Status.RuntimeSnapshot != nil {
		t.Error("the copy still carries the snapshot")
	}
	if job.Status.RuntimeSnapshot == nil || view.Name != "job" {
		t.Errorf("the TrainJob lost its snapshot (%v) or the copy its name (%q)", job.Status.RuntimeSnapshot, view.Name)
	}
}

func TestCheckSize(t *testing.T) {
	withEnv := func(n int) *trainer.TrainingRuntimeSpec {
		spec := &trainer.TrainingRuntimeSpec{}
		rj := jobsetv1alpha2.ReplicatedJob{Name: "node"}
		rj.Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Env: []corev1.EnvVar{{Name: "SCRIPT", Value: strings.Repeat("x", n)}}}}
		spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{rj}
		return spec
	}
	if err := CheckSize(field.NewPath("spec"), withEnv(MaxSpecBytes/2)); err != nil {
		t.Errorf("half a MiB refused: %v", err)
	}
	err := CheckSize(field.NewPath("spec"), withEnv(MaxSpecBytes))
	if err == nil {
		t.Fatal("a spec above MaxSpecBytes accepted")
	}
	for _, want := range []string{"spec: Invalid value:", "must be at most 1048576 bytes", "status.runtimeSnapshot", "ConfigMap"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}
