package controller

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

var secretGVK = corev1.SchemeGroupVersion.WithKind("Secret")

// keyMaker builds a Secret holding a new key on every Build, marked to be
// created once, as an SSH key is.
type keyMaker struct{ builds int }

func (*keyMaker) Describe() framework.Description {
	return framework.Description{Name: "KeyMaker", MLPolicyKeys: []string{framework.NoPolicyKey}, Builds: []schema.GroupVersionKind{secretGVK}}
}

func (k *keyMaker) Build(_ context.Context, _ *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	k.builds++
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(secretGVK)
	u.SetName(job.Name + "-key")
	_ = unstructured.SetNestedField(u.Object, map[string]any{"key": "key-" + strconv.Itoa(k.builds)}, "stringData")
	return []framework.Object{framework.CreateOnce(u)}, nil
}

func TestCreateOnceObjectsAreNeverUpdated(t *testing.T) {
	k := &keyMaker{}
	f := newFixtureOf(t, k, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	created := objectApplies.WithLabelValues("KeyMaker", "Secret", applyResultCreated)
	exists := objectApplies.WithLabelValues("KeyMaker", "Secret", applyResultExists)
	c0, e0 := testutil.ToFloat64(created), testutil.ToFloat64(exists)

	key := func() string {
		t.Helper()
		s := &corev1.Secret{}
		if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job-key"}, s); err != nil {
			t.Fatal(err)
		}
		if !metav1.IsControlledBy(s, f.job(t, "job")) {
			t.Errorf("the Secret's owner references %+v do not make the TrainJob its controller", s.OwnerReferences)
		}
		return s.StringData["key"] + string(s.Data["key"])
	}
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	first := key()
	if first != "key-1" {
		t.Fatalf("the Secret holds %q, want the key of the first Build", first)
	}
	for i := range 3 {
		// A new label each time: the plugins run again, and Build makes
		// a new key each time.
		f.relabel(t, "job", fmt.Sprint(i))
		if err := f.reconcile(t, "job"); err != nil {
			t.Fatal(err)
		}
	}
	if k.builds != 4 {
		t.Fatalf("Build ran %d times, want 4 (once per reconcile of a changed TrainJob)", k.builds)
	}
	if got := key(); got != first {
		t.Errorf("after 3 more reconciles the Secret holds %q, want the first key %q: an object created once must never be updated", got, first)
	}
	if d := testutil.ToFloat64(created) - c0; d != 1 {
		t.Errorf("result=created grew by %v, want 1", d)
	}
	if d := testutil.ToFloat64(exists) - e0; d != 3 {
		t.Errorf("result=exists grew by %v, want 3", d)
	}
}
