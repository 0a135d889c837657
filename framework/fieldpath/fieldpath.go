// Package fieldpath names fields of Kubernetes objects by their JSON names
// and clears them, in typed objects and unstructured ones alike.
//
// A plugin's Watch uses these paths to tell the controller what of a
// watched kind its cache need not keep (WatchSource.Omit): the controller
// clears them from every object its informers deliver, before the object
// is cached, so that a kind whose objects are mostly pod templates costs a
// fraction of the memory and of the deep copies. The controller knows no
// kind: what may be dropped is the plugin's to say, as the one that reads
// the objects.
//
// A path is the fields' JSON names joined by dots; a name followed by []
// is a list, and the rest of the path applies to each of its items:
//
//	metadata.managedFields
//	spec.replicatedJobs[].template.spec.template
package fieldpath

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Path is a parsed field path.
type Path struct {
	text  string
	steps []step
}

type step struct {
	name string
	list bool
}

// String returns the path as it was written.
func (p Path) String() string { return p.text }

// Parse parses a field path, with an error that says what is accepted.
func Parse(text string) (Path, error) {
	if text == "" {
		return Path{}, fmt.Errorf("field path is empty; want the fields' JSON names joined by dots, such as spec.template")
	}
	parts := strings.Split(text, ".")
	p := Path{text: text, steps: make([]step, 0, len(parts))}
	for i, part := range parts {
		s := step{name: part}
		if name, ok := strings.CutSuffix(part, "[]"); ok {
			s = step{name: name, list: true}
		}
		if s.name == "" || strings.ContainsAny(s.name, "[]") {
			return Path{}, fmt.Errorf("field path %q: part %d (%q) is not a field name; want JSON names joined by dots, a list's name followed by [] (such as spec.replicatedJobs[].template)", text, i+1, part)
		}
		p.steps = append(p.steps, s)
	}
	return p, nil
}

// ParseAll parses paths, naming the first that is malformed.
func ParseAll(texts []string) ([]Path, error) {
	out := make([]Path, 0, len(texts))
	for _, t := range texts {
		p, err := Parse(t)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Clear sets the field that p names to its zero value in obj: a pointer
// to a typed object (its struct fields found by their json tags, inlined
// structs included), or an unstructured object's content
// (map[string]any, as Unstructured.Object holds it), where the field is
// removed. A path that leads nowhere in obj (a field the type does not
// have, a nil pointer, an absent key) clears nothing.
func Clear(obj any, p Path) {
	if m, ok := obj.(map[string]any); ok {
		clearMap(m, p.steps)
		return
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	clearValue(v.Elem(), p.steps)
}

func clearMap(m map[string]any, steps []step) {
	s := steps[0]
	if len(steps) == 1 && !s.list {
		delete(m, s.name)
		return
	}
	next, ok := m[s.name]
	if !ok {
		return
	}
	if !s.list {
		if child, ok := next.(map[string]any); ok {
			clearMap(child, steps[1:])
		}
		return
	}
	items, ok := next.([]any)
	if !ok {
		return
	}
	if len(steps) == 1 {
		delete(m, s.name)
		return
	}
	for _, item := range items {
		if child, ok := item.(map[string]any); ok {
			clearMap(child, steps[1:])
		}
	}
}

func clearValue(v reflect.Value, steps []step) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	s := steps[0]
	f, ok := fieldByJSONName(v, s.name)
	if !ok {
		return
	}
	if len(steps) == 1 {
		if f.CanSet() {
			f.SetZero()
		}
		return
	}
	if !s.list {
		clearValue(f, steps[1:])
		return
	}
	if f.Kind() != reflect.Slice && f.Kind() != reflect.Array {
		return
	}
	for i := range f.Len() {
		clearValue(f.Index(i), steps[1:])
	}
}

// fieldByJSONName finds the field of struct v whose JSON name is name,
// looking into inlined (embedded or ",inline") structs as encoding/json
// and Kubernetes' serializers do.
func fieldByJSONName(v reflect.Value, name string) (reflect.Value, bool) {
	index, ok := jsonIndex(v.Type())[name]
	if !ok {
		return reflect.Value{}, false
	}
	f := v
	for _, i := range index {
		for f.Kind() == reflect.Pointer {
			if f.IsNil() {
				return reflect.Value{}, false
			}
			f = f.Elem()
		}
		f = f.Field(i)
	}
	return f, true
}

// indexes caches, per struct type, the field index of each JSON name:
// the informers clear the same few kinds over and over.
var indexes sync.Map // reflect.Type -> map[string][]int

func jsonIndex(t reflect.Type) map[string][]int {
	if m, ok := indexes.Load(t); ok {
		return m.(map[string][]int)
	}
	m := map[string][]int{}
	addFields(t, nil, m)
	indexes.Store(t, m)
	return m
}

func addFields(t reflect.Type, prefix []int, m map[string][]int) {
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && (f.Anonymous && name == "" || strings.Contains(","+opts+",", ",inline,")) {
			addFields(ft, index, m)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, taken := m[name]; !taken {
			m[name] = index
		}
	}
}

// AtPointer returns the value at a JSON pointer (RFC 6901) of an
// unstructured object's content, and whether it is there. A pointer that
// does not start with / is an error; a list index that is not a number or
// past the list's end, and a step into a scalar, are absent.
func AtPointer(obj map[string]any, pointer string) (any, bool, error) {
	if !strings.HasPrefix(pointer, "/") {
		return nil, false, fmt.Errorf("%q is not a JSON pointer (RFC 6901): want /-separated names, such as /spec/replicatedJobs/0/template/spec/parallelism", pointer)
	}
	var cur any = obj
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false, nil
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false, nil
			}
			cur = v[i]
		default:
			return nil, false, nil
		}
	}
	return cur, true, nil
}
