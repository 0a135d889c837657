// Package cacheomit clears, from the objects the controller's informers
// deliver, the fields that plugins said they never read
// (framework.WatchSource.Omit), before the objects are cached. The
// controller knows no kind: which fields of a JobSet (or of any kind a
// plugin builds or watches) the cache may drop is the plugin's to declare,
// and this package only applies what was declared, to typed and
// unstructured objects alike.
package cacheomit

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/trainforge/trainforge/framework/fieldpath"
)

// Table holds, per kind, the fields the cache omits.
type Table struct {
	scheme *runtime.Scheme
	kinds  sync.Map // schema.GroupVersionKind -> []fieldpath.Path
}

// New returns an empty table; scheme names the kinds of typed objects.
func New(scheme *runtime.Scheme) *Table {
	return &Table{scheme: scheme}
}

// Set sets the fields omitted from the objects of kind gvk. It applies to
// the objects delivered from then on: set it before the kind's informer
// starts.
func (t *Table) Set(gvk schema.GroupVersionKind, omit []string) error {
	paths, err := fieldpath.ParseAll(omit)
	if err != nil {
		return fmt.Errorf("omitting fields of %s from the cache: %w", gvk, err)
	}
	if len(paths) == 0 {
		t.kinds.Delete(gvk)
		return nil
	}
	t.kinds.Store(gvk, paths)
	return nil
}

// Transform is the cache's transform of every kind: it drops managedFields
// (nothing reads them, and without them an object is about half the
// size) and the fields omitted from the object's kind.
func (t *Table) Transform(obj any) (any, error) {
	obj, err := cache.TransformStripManagedFields()(obj)
	if err != nil {
		return obj, err
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return obj, nil
	}
	gvk := ro.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		// A typed object read from the API server has no TypeMeta.
		kinds, _, err := t.scheme.ObjectKinds(ro)
		if err != nil || len(kinds) == 0 {
			return obj, nil
		}
		gvk = kinds[0]
	}
	v, ok := t.kinds.Load(gvk)
	if !ok {
		return obj, nil
	}
	Clear(obj, v.([]fieldpath.Path))
	return obj, nil
}

// Omitting returns a transform that drops managedFields and paths from
// every object, for a cache of one kind (a watch mapped by label has one).
func Omitting(omit []string) (toolscache.TransformFunc, error) {
	paths, err := fieldpath.ParseAll(omit)
	if err != nil {
		return nil, err
	}
	return func(obj any) (any, error) {
		obj, err := cache.TransformStripManagedFields()(obj)
		if err != nil {
			return obj, err
		}
		Clear(obj, paths)
		return obj, nil
	}, nil
}

// Clear clears paths from obj, a typed object or an unstructured one.
func Clear(obj any, paths []fieldpath.Path) {
	target := obj
	if u, ok := obj.(runtime.Unstructured); ok {
		target = u.UnstructuredContent()
	}
	for _, p := range paths {
		fieldpath.Clear(target, p)
	}
}
