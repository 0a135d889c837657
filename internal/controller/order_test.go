package controller

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin/jobset"
	"github.com/trainforge/trainforge/builtin/plainml"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// configMapBuilder builds one ConfigMap, as a plugin builds what its
// workload's pods mount.
type configMapBuilder struct{}

func (configMapBuilder) Describe() framework.Description {
	return framework.Description{Name: "ConfigMapBuilder", MLPolicyKeys: []string{framework.NoPolicyKey}, Builds: []schema.GroupVersionKind{configMapGVK}}
}

// A Build of the wrong signature would leave it no builder, and the test
// would pass without a ConfigMap to order.
var _ framework.Builder = configMapBuilder{}

func (configMapBuilder) Build(_ context.Context, _ *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(configMapGVK)
	u.SetName(job.Name + "-hostfile")
	_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"hostfile": "node-0"}, "data")
	return framework.Apply(u), nil
}

// The plugins are ordered so that the JobSet is built before the
// ConfigMap its pods need (as the default order builds a JobSet before
// its PodGroup): the ConfigMap is still applied first.
func TestWhatAWorkloadNeedsIsAppliedBeforeIt(t *testing.T) {
	rt := runtimeOf("plain", nil)
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "trainer"}}
	f := newFixtureWith(t, []framework.Plugin{plainml.New(), jobset.New(), configMapBuilder{}}, rt, trainJobOf("job", "plain"))
	var applied []string
	f.r.Client = interceptor.NewClient(f.client.(client.WithWatch), interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if u, ok := obj.(interface{ GetKind() string }); ok {
				applied = append(applied, u.GetKind())
			}
			return c.Apply(ctx, obj, opts...)
		},
		// A first apply, of an object not in the cache (createByApply).
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if patch.Type() == types.ApplyPatchType {
				applied = append(applied, obj.GetObjectKind().GroupVersionKind().Kind)
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ConfigMap", "JobSet"}; !slices.Equal(applied, want) {
		t.Errorf("applied %v, want %v", applied, want)
	}
	// The Created condition still names them in build order.
	if got, want := conditionMessage(f.job(t, "job"), trainer.TrainJobCreated), "Created JobSet job, ConfigMap job-hostfile; plugins: PlainML, JobSet, ConfigMapBuilder"; got != want {
		t.Errorf("Created message %q, want %q", got, want)
	}
}

func conditionMessage(job *trainer.TrainJob, typ string) string {
	for _, c := range job.Status.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}

func TestApplyOrder(t *testing.T) {
	obj := func(kind, name string, fields map[string]any) frameworkruntime.BuiltObject {
		u := &unstructured.Unstructured{Object: fields}
		u.SetKind(kind)
		u.SetName(name)
		return frameworkruntime.BuiltObject{Plugin: "P", Object: u}
	}
	podSpec := map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}
	objects := []frameworkruntime.BuiltObject{
		obj("JobSet", "js", map[string]any{"spec": map[string]any{"replicatedJobs": []any{map[string]any{"template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": podSpec}}}}}}}),
		obj("PodGroup", "pg", map[string]any{"spec": map[string]any{"minMember": int64(2)}}),
		obj("Pod", "pod", map[string]any{"spec": podSpec}),
		obj("Secret", "s", map[string]any{"data": map[string]any{"containers": "eA=="}}),
		obj("Deployment", "d", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": podSpec}}}),
		// A data key named like the field is no pod spec.
		obj("ConfigMap", "cm", map[string]any{"data": map[string]any{"containers": "[]"}}),
		obj("ServiceAccount", "sa", map[string]any{}),
		obj("Widget", "w", map[string]any{"spec": map[string]any{"containers": "three"}}),
	}
	var got []string
	for _, o := range applyOrder(objects) {
		got = append(got, o.Object.GetName())
	}
	if want := []string{"pg", "s", "cm", "sa", "w", "js", "pod", "d"}; !slices.Equal(got, want) {
		t.Errorf("apply order %v, want %v", got, want)
	}
	if objects[0].Object.GetName() != "js" {
		t.Error("applyOrder reordered its argument")
	}
}
