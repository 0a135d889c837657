package runtimeref

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

func TestResolve(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := trainer.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cluster := &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}
	cluster.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To[int32](1)}
	local := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shared"}}
	local.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To[int32](2)}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cluster, local).Build()

	for name, tc := range map[string]struct {
		ns       string
		ref      trainer.RuntimeRef
		numNodes int32
		notFound bool
		err      string
	}{
		"cluster runtime by default":              {ns: "team-a", ref: trainer.RuntimeRef{Name: "shared"}, numNodes: 1},
		"namespaced runtime":                      {ns: "team-a", ref: trainer.RuntimeRef{Name: "shared", Kind: ptr.To(trainer.TrainingRuntimeKind)}, numNodes: 2},
		"namespaced runtime of another namespace": {ns: "team-b", ref: trainer.RuntimeRef{Name: "shared", Kind: ptr.To(trainer.TrainingRuntimeKind)}, notFound: true},
		"missing":       {ns: "team-a", ref: trainer.RuntimeRef{Name: "nope"}, notFound: true},
		"unknown kind":  {ns: "team-a", ref: trainer.RuntimeRef{Name: "shared", Kind: ptr.To("JAXRuntime")}, err: `spec.runtimeRef.kind: Unsupported value: "JAXRuntime": supported values: "ClusterTrainingRuntime", "TrainingRuntime"`},
		"unknown group": {ns: "team-a", ref: trainer.RuntimeRef{Name: "shared", APIGroup: ptr.To("example.com")}, err: `spec.runtimeRef.apiGroup: Unsupported value: "example.com": supported values: "trainer.kubeflow.org"`},
	} {
		t.Run(name, func(t *testing.T) {
			job := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: "job"}}
			job.Spec.RuntimeRef = tc.ref
			spec, err := Resolve(context.Background(), reader, job)
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
			case *spec.MLPolicy.NumNodes != tc.numNodes:
				t.Errorf("resolved the runtime with numNodes %d, want %d", *spec.MLPolicy.NumNodes, tc.numNodes)
			}
		})
	}
}
