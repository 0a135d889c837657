package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The plugin's side of Info changes and of the patch for an older host:
// what the SDK answers (Server.answerEnforce), from two encodings of the
// plugin's own Info. The host's side is apply.go.

// CreateChanges returns the Info changes that turn before into after, two
// encodings of the same Info type by the same program, or nil when they
// are equal.
func CreateChanges(before, after []byte) ([]byte, error) {
	_, c, err := diffDocuments(before, after)
	if err != nil || c == nil {
		return nil, err
	}
	return json.Marshal(c)
}

// diffDocuments decodes both documents and returns before's and the
// change between them, nil for none.
func diffDocuments(before, after []byte) (any, *change, error) {
	if bytes.Equal(before, after) {
		return nil, nil, nil
	}
	b, err := decodeTree(before)
	if err != nil {
		return nil, nil, fmt.Errorf("the Info before the changes: %w", err)
	}
	a, err := decodeTree(after)
	if err != nil {
		return nil, nil, fmt.Errorf("the Info after the changes: %w", err)
	}
	c, err := diffValues(b, a)
	return b, c, err
}

// diffValues returns the change from b to a, nil when they are equal.
func diffValues(b, a any) (*change, error) {
	if reflect.DeepEqual(b, a) {
		return nil, nil
	}
	bm, bIsObject := b.(map[string]any)
	am, aIsObject := a.(map[string]any)
	if bIsObject && aIsObject {
		c := &change{Fields: map[string]*change{}}
		for k := range bm {
			if _, ok := am[k]; !ok {
				c.Fields[k] = &change{Remove: true}
			}
		}
		for k, av := range am {
			bv, ok := bm[k]
			if !ok {
				set, err := setChange(av)
				if err != nil {
					return nil, err
				}
				c.Fields[k] = set
				continue
			}
			sub, err := diffValues(bv, av)
			if err != nil {
				return nil, err
			}
			if sub != nil {
				c.Fields[k] = sub
			}
		}
		return c, nil
	}
	bl, bIsList := b.([]any)
	al, aIsList := a.([]any)
	if bIsList && aIsList && len(al) > 0 && (hasContainers(bl) || hasContainers(al)) {
		return diffLists(bl, al)
	}
	// A scalar, a list of scalars (whose elements hold no field a plugin
	// could fail to know), an empty list or a change of type: the value as
	// the plugin has it.
	return setChange(a)
}

func setChange(v any) (*change, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &change{Set: data}, nil
}

// hasContainers reports whether a list has an object or a list among its
// elements.
func hasContainers(l []any) bool {
	for _, v := range l {
		switch v.(type) {
		case map[string]any, []any:
			return true
		}
	}
	return false
}

// diffLists returns the items of the list a, each taken from the element
// of b that it is (matchElements) with its changes, or set when new.
func diffLists(b, a []any) (*change, error) {
	from := matchElements(b, a)
	c := &change{Items: make([]*change, len(a))}
	for i, j := range from {
		if j < 0 {
			set, err := setChange(a[i])
			if err != nil {
				return nil, err
			}
			c.Items[i] = set
			continue
		}
		item, err := diffValues(b[j], a[i])
		if err != nil {
			return nil, err
		}
		switch {
		case item == nil:
			item = &change{}
		case item.Set != nil:
			// The element changed type: a new element.
			c.Items[i] = item
			continue
		}
		item.From = &j
		c.Items[i] = item
	}
	return c, nil
}

// matchElements returns, for each element of a, the index of the element
// of b that it is, or -1 for a new one. Elements are the same element when
// they have the same "name", if every element of both lists is an object
// with a distinct string "name" (the way Kubernetes identifies containers,
// env vars, volumes and ports, and Info its podSets). Otherwise the
// elements equal at the start of both lists are the same, then those equal
// at the end, and those left between pair in order; the longer list's rest
// is new (in a) or removed (from b).
func matchElements(b, a []any) []int {
	from := make([]int, len(a))
	if bNames, ok := namesOf(b); ok {
		if aNames, ok := namesOf(a); ok {
			for name, i := range aNames {
				from[i] = -1
				if j, ok := bNames[name]; ok {
					from[i] = j
				}
			}
			return from
		}
	}
	for i := range from {
		from[i] = -1
	}
	prefix := 0
	for prefix < len(a) && prefix < len(b) && reflect.DeepEqual(a[prefix], b[prefix]) {
		from[prefix] = prefix
		prefix++
	}
	suffix := 0
	for suffix < len(a)-prefix && suffix < len(b)-prefix && reflect.DeepEqual(a[len(a)-1-suffix], b[len(b)-1-suffix]) {
		from[len(a)-1-suffix] = len(b) - 1 - suffix
		suffix++
	}
	for k := 0; prefix+k < len(a)-suffix && prefix+k < len(b)-suffix; k++ {
		from[prefix+k] = prefix + k
	}
	return from
}

// namesOf returns the index of each element by its string "name", and
// false unless every element has one and no two share it.
func namesOf(l []any) (map[string]int, bool) {
	names := make(map[string]int, len(l))
	for i, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		name, ok := m["name"].(string)
		if !ok {
			return nil, false
		}
		if _, dup := names[name]; dup {
			return nil, false
		}
		names[name] = i
	}
	return names, true
}

// CreateChangesPatch returns the JSON Patch that turns before into after,
// two encodings of the same Info type by the same program, or nil when they
// are equal: the Info changes (CreateChanges) written as operations, for a
// host that takes patches. Like the changes, it names list elements by
// where they were in before, so applied to a document with more fields
// than before has (the host's), it keeps them.
func CreateChangesPatch(before, after []byte) ([]byte, error) {
	b, c, err := diffDocuments(before, after)
	if err != nil || c == nil {
		return nil, err
	}
	ops := patchOperations(b, c, "", nil)
	if len(ops) == 0 {
		return nil, nil
	}
	return json.Marshal(ops)
}

// patchOperations appends the operations of c, a change of b at the JSON
// Pointer path.
func patchOperations(b any, c *change, path string, ops []patchOperation) []patchOperation {
	switch {
	case c.Set != nil:
		return append(ops, patchOperation{Op: "add", Path: path, Value: c.Set})
	case c.Fields != nil:
		m, _ := b.(map[string]any)
		for _, name := range sortedKeys(c.Fields) {
			sub, p := c.Fields[name], path+"/"+escapePointerToken(name)
			if sub.Remove {
				ops = append(ops, patchOperation{Op: "remove", Path: p})
				continue
			}
			ops = patchOperations(m[name], sub, p, ops)
		}
		return ops
	case c.Items != nil:
		l, _ := b.([]any)
		taken := make([]bool, len(l))
		for _, item := range c.Items {
			if item.From != nil {
				taken[*item.From] = true
			}
		}
		// First remove what no item takes, from the end; then place each
		// item at its index, adding new ones and moving kept ones; then
		// change each kept element where it now is.
		var cur []int
		for j := len(l) - 1; j >= 0; j-- {
			if !taken[j] {
				ops = append(ops, patchOperation{Op: "remove", Path: path + "/" + strconv.Itoa(j)})
			}
		}
		for j := range l {
			if taken[j] {
				cur = append(cur, j)
			}
		}
		for i, item := range c.Items {
			at := path + "/" + strconv.Itoa(i)
			if item.From == nil {
				ops = append(ops, patchOperation{Op: "add", Path: at, Value: item.Set})
				cur = slices.Insert(cur, i, -1)
				continue
			}
			p := slices.Index(cur[i:], *item.From) + i
			if p != i {
				ops = append(ops, patchOperation{Op: "move", From: path + "/" + strconv.Itoa(p), Path: at})
				cur = slices.Insert(slices.Delete(cur, p, p+1), i, *item.From)
			}
		}
		for i, item := range c.Items {
			if item.From != nil && (item.Fields != nil || item.Items != nil) {
				inner := *item
				inner.From = nil
				ops = patchOperations(l[*item.From], &inner, path+"/"+strconv.Itoa(i), ops)
			}
		}
		return ops
	}
	return ops
}

func escapePointerToken(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
