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

// decoded is what an Info decoded from its raw JSON, kept so that a
// reconcile decodes each policy and the template once however many plugins
// and phases read them. Each is kept with the bytes it came from: a plugin
// that replaces the bytes has them decoded anew.
type decoded struct {
	mlRaw, pgRaw, templateRaw []byte
	ml                        *trainer.MLPolicy
	pg                        *trainer.PodGroupPolicy
	template                  *trainer.JobSetTemplateSpec
}

func (i *Info) memo() *decoded {
	if i.decoded == nil {
		i.decoded = &decoded{}
	}
	return i.decoded
}

// sameBytes reports whether raw is the slice a value was decoded from:
// the same backing array and length, which a plugin can only keep by
// leaving the field alone.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// MLPolicy decodes the runtime's mlPolicy; it is nil when the runtime has
// none. The result is the caller's to change.
func (i *Info) MLPolicy() (*trainer.MLPolicy, error) {
	p, err := i.mlPolicy()
	return p.DeepCopy(), err
}

func (i *Info) mlPolicy() (*trainer.MLPolicy, error) {
	raw := i.RuntimePolicy.MLPolicy
	if len(raw) == 0 {
		return nil, nil
	}
	m := i.memo()
	if m.ml != nil && sameBytes(m.mlRaw, raw) {
		return m.ml, nil
	}
	p := &trainer.MLPolicy{}
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, fmt.Errorf("decoding Info.runtimePolicy.mlPolicy: %w", err)
	}
	m.ml, m.mlRaw = p, raw
	return p, nil
}

// PodGroupPolicy decodes the runtime's podGroupPolicy; it is nil when the
// runtime has none. The result is the caller's to change.
func (i *Info) PodGroupPolicy() (*trainer.PodGroupPolicy, error) {
	p, err := i.podGroupPolicy()
	return p.DeepCopy(), err
}

func (i *Info) podGroupPolicy() (*trainer.PodGroupPolicy, error) {
	raw := i.RuntimePolicy.PodGroupPolicy
	if len(raw) == 0 {
		return nil, nil
	}
	m := i.memo()
	if m.pg != nil && sameBytes(m.pgRaw, raw) {
		return m.pg, nil
	}
	p := &trainer.PodGroupPolicy{}
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, fmt.Errorf("decoding Info.runtimePolicy.podGroupPolicy: %w", err)
	}
	m.pg, m.pgRaw = p, raw
	return p, nil
}

// PolicyKeys returns the policy keys the runtime sets, which choose the
// plugins that take part in the job.
func (i *Info) PolicyKeys() (PolicyKeys, error) {
	ml, err := i.mlPolicy()
	if err != nil {
		return PolicyKeys{}, err
	}
	pg, err := i.podGroupPolicy()
	if err != nil {
		return PolicyKeys{}, err
	}
	return PolicyKeys{ML: ml.Keys(), PodGroup: pg.Keys()}, nil
}

// TemplateSpec decodes Info.Template. The result is the caller's to change.
func (i *Info) TemplateSpec() (*trainer.JobSetTemplateSpec, error) {
	t, err := i.templateSpec()
	if err != nil {
		return nil, err
	}
	return t.DeepCopy(), nil
}

// templateSpec is TemplateSpec without the copy, for readers that change
// nothing.
func (i *Info) templateSpec() (*trainer.JobSetTemplateSpec, error) {
	if len(i.Template) == 0 {
		return &trainer.JobSetTemplateSpec{}, nil
	}
	m := i.memo()
	if m.template == nil || !sameBytes(m.templateRaw, i.Template) {
		t := &trainer.JobSetTemplateSpec{}
		if err := json.Unmarshal(i.Template, t); err != nil {
			return nil, fmt.Errorf("decoding Info.template: %w", err)
		}
		m.template, m.templateRaw = t, i.Template
	}
	return m.template, nil
}

// setTemplate sets Info.Template to raw, the encoding of t: TemplateSpec
// then gives copies of t without decoding raw. t is the Info's from now on.
func (i *Info) setTemplate(t *trainer.JobSetTemplateSpec, raw json.RawMessage) {
	i.Template = raw
	m := i.memo()
	m.template, m.templateRaw = t, raw
}
