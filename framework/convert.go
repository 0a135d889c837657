package framework

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// ToUnstructured converts a typed object to an unstructured one of the
// given kind, the form in which Build returns objects.
func ToUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// FromUnstructured converts an unstructured object to a typed one.
func FromUnstructured(u *unstructured.Unstructured, obj any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj)
}

// MLPolicy decodes the runtime's mlPolicy; it is nil when the runtime has none.
func (i *Info) MLPolicy() (*trainer.MLPolicy, error) {
	if len(i.RuntimePolicy.MLPolicy) == 0 {
		return nil, nil
	}
	p := &trainer.MLPolicy{}
	if err := json.Unmarshal(i.RuntimePolicy.MLPolicy, p); err != nil {
		return nil, fmt.Errorf("decoding Info.runtimePolicy.mlPolicy: %w", err)
	}
	return p, nil
}

// PodGroupPolicy decodes the runtime's podGroupPolicy; it is nil when the
// runtime has none.
func (i *Info) PodGroupPolicy() (*trainer.PodGroupPolicy, error) {
	if len(i.RuntimePolicy.PodGroupPolicy) == 0 {
		return nil, nil
	}
	p := &trainer.PodGroupPolicy{}
	if err := json.Unmarshal(i.RuntimePolicy.PodGroupPolicy, p); err != nil {
		return nil, fmt.Errorf("decoding Info.runtimePolicy.podGroupPolicy: %w", err)
	}
	return p, nil
}

// PolicyKeys decodes the policy keys the runtime sets, which choose the
// plugins that take part in the job.
func (i *Info) PolicyKeys() (PolicyKeys, error) {
	ml, err := i.MLPolicy()
	if err != nil {
		return PolicyKeys{}, err
	}
	pg, err := i.PodGroupPolicy()
	if err != nil {
		return PolicyKeys{}, err
	}
	return PolicyKeys{ML: ml.Keys(), PodGroup: pg.Keys()}, nil
}

// TemplateSpec decodes Info.Template.
func (i *Info) TemplateSpec() (*trainer.JobSetTemplateSpec, error) {
	t := &trainer.JobSetTemplateSpec{}
	if len(i.Template) == 0 {
		return t, nil
	}
	if err := json.Unmarshal(i.Template, t); err != nil {
		return nil, fmt.Errorf("decoding Info.template: %w", err)
	}
	return t, nil
}
