package framework

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ToObject turns a typed object (a corev1.Secret, a ConfigMap, a CRD's Go
// type) into what Build returns, so that a builder holds only what is its
// own:
//
//   - it is converted to an unstructured object of kind gvk;
//   - Info's labels and annotations, which every object built for the job
//     carries, are added to the object's own; the object's own value wins on
//     a key both set;
//   - the empty metadata.creationTimestamp and status a typed object
//     converts with are left out: they are not the plugin's, and an apply
//     that sent them would claim them.
//
// Leave the namespace empty (the host sets the TrainJob's) and set no owner
// reference: the host sets that too.
//
//	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-config"}, Data: data}
//	obj, err := framework.ToObject(info, cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
func ToObject(info *Info, obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	u, err := ToUnstructured(obj, gvk)
	if err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	if info != nil {
		u.SetLabels(underneath(info.Labels, u.GetLabels()))
		u.SetAnnotations(underneath(info.Annotations, u.GetAnnotations()))
	}
	return u, nil
}

// underneath returns base with own merged over it; nil when both are empty,
// so that an object without labels gets no empty labels map.
func underneath(base, own map[string]string) map[string]string {
	var out map[string]string
	MergeMap(&out, base)
	MergeMap(&out, own)
	return out
}
