package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The objects of the kinds plugins build are read from the informer cache.
// A kind the controller's scheme knows (JobSet, PodGroup, Secret,
// ConfigMap) is cached typed: a typed JobSet takes about a third of the
// memory of the same JobSet as nested maps, which at thousands of
// TrainJobs is most of the controller's heap. Plugins still get
// unstructured objects, converted on each read. A kind the scheme does not
// know is cached unstructured.

// newBuiltObject returns an empty object of a built kind, typed when the
// scheme knows the kind.
func newBuiltObject(scheme *runtime.Scheme, gvk schema.GroupVersionKind) client.Object {
	if scheme != nil && scheme.Recognizes(gvk) {
		if o, err := scheme.New(gvk); err == nil {
			if co, ok := o.(client.Object); ok {
				co.GetObjectKind().SetGroupVersionKind(gvk)
				return co
			}
		}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// newBuiltList returns an empty list of a built kind, typed like
// newBuiltObject.
func newBuiltList(scheme *runtime.Scheme, gvk schema.GroupVersionKind) client.ObjectList {
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if scheme != nil && scheme.Recognizes(gvk) && scheme.Recognizes(listGVK) {
		if o, err := scheme.New(listGVK); err == nil {
			if l, ok := o.(client.ObjectList); ok {
				return l
			}
		}
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(listGVK)
	return l
}

// asUnstructured returns obj as an unstructured object of kind gvk (typed
// objects read from a cache carry no kind of their own).
func asUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
