package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	kjson "sigs.k8s.io/json"

	"github.com/trainforge/trainforge/framework"
)

// Info changes (protocol 1.2) are how a plugin tells the host what it
// changed in Info, relative to its own view of Info: the plugin encodes the
// Info it decoded from the request and the Info after its changes, both
// with its own types, and sends the difference. A field the plugin's types
// do not have is in neither encoding, so the changes never mention it, and
// the host, which applies them to the Info it sent, keeps it. The format is
// documented in plugin.proto (EnforceMLPolicyResponse.info_changes).

// change is one node of an Info-changes document: exactly one of Set,
// Remove (a member only), Fields or Items; From only in a list's items.
type change struct {
	Set    json.RawMessage    `json:"set,omitempty"`
	Remove bool               `json:"remove,omitempty"`
	From   *int               `json:"from,omitempty"`
	Fields map[string]*change `json:"fields,omitempty"`
	Items  []*change          `json:"items,omitempty"`
}

// CreateChanges returns the Info changes that turn before into after, two
// encodings of the same Info type by the same program, or nil when they
// are equal.
func CreateChanges(before, after []byte) ([]byte, error) {
	c, err := diffDocuments(before, after)
	if err != nil || c == nil {
		return nil, err
	}
	return json.Marshal(c)
}

// diffDocuments decodes both documents and returns the change between
// them, nil for none.
func diffDocuments(before, after []byte) (*change, error) {
	if bytes.Equal(before, after) {
		return nil, nil
	}
	b, err := decodeTree(before)
	if err != nil {
		return nil, fmt.Errorf("the Info before the changes: %w", err)
	}
	a, err := decodeTree(after)
	if err != nil {
		return nil, fmt.Errorf("the Info after the changes: %w", err)
	}
	return diffValues(b, a)
}

// decodeTree decodes a JSON document into maps, slices and json.Numbers,
// which encode back to the same numbers.
func decodeTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the document")
	}
	return v, nil
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

// ApplyInfoChanges applies a plugin's Info changes (protocol 1.2) to info,
// the Info the host sent. Everything the changes do not mention stays as
// it was: that is how the host keeps the fields the plugin does not know.
// It refuses, leaving info as it was, changes that are not an Info-changes
// document, touch anything but Info's own fields, reach a member or element
// that is not there, or set a field, or a value, that Info does not have.
func ApplyInfoChanges(info *framework.Info, doc []byte) error {
	if len(doc) == 0 {
		return nil
	}
	c, err := decodeChanges(doc)
	if err != nil {
		return err
	}
	if c.Fields == nil {
		return errors.New(`the Info changes must be {"fields": {...}}, changes to Info's own fields`)
	}
	for _, name := range sortedKeys(c.Fields) {
		if !slices.Contains(patchableFields, name) {
			return fmt.Errorf("the Info changes change %q, which is outside Info: a plugin may change only Info's %s",
				"/"+escapePointerToken(name), strings.Join(patchableFields, ", "))
		}
	}
	out := *info
	if err := applyValue(reflect.ValueOf(&out).Elem(), c, nil); err != nil {
		return fmt.Errorf("the Info changes do not apply to the Info they were given: %w", err)
	}
	*info = out
	return nil
}

func decodeChanges(doc []byte) (*change, error) {
	c := &change{}
	if err := decodeStrictInto(c, doc); err != nil {
		return nil, fmt.Errorf(`the Info changes are not an Info-changes document ({"set": value}, {"fields": {...}}, {"items": [...]}, {"remove": true}, {"from": n}): %w`, err)
	}
	return c, nil
}

// check refuses a change node that is not exactly one kind of change.
// A member's change may be a removal; an item's carries From unless it
// sets a new element.
func (c *change) check(at *place, member, item bool) error {
	if c == nil {
		return fmt.Errorf("%s: a change is an object, not null", at.String())
	}
	kinds := 0
	for _, set := range []bool{c.Set != nil, c.Remove, c.Fields != nil, c.Items != nil} {
		if set {
			kinds++
		}
	}
	switch {
	case c.Remove && !member:
		return fmt.Errorf("%s: remove is for an object's member", at.String())
	case c.From != nil && !item:
		return fmt.Errorf("%s: from is for a list's item", at.String())
	case item && c.From == nil && c.Set == nil:
		return fmt.Errorf(`%s: a list's item is {"set": value} or {"from": n, ...}`, at.String())
	case item && c.From != nil && c.Set != nil:
		return fmt.Errorf("%s: an item has from or set, not both", at.String())
	case kinds > 1:
		return fmt.Errorf("%s: a change has one of set, remove, fields and items", at.String())
	case kinds == 0 && !item:
		return fmt.Errorf("%s: a change has one of set, remove, fields and items", at.String())
	}
	return nil
}

// setsEmpty reports whether c sets an empty value, which is no change to
// a field the host does not have.
func (c *change) setsEmpty() bool {
	if c.Set == nil {
		return false
	}
	v, err := decodeTree(c.Set)
	return err == nil && isEmptyJSON(v)
}

// place is where a change is in Info, for messages: a member or an item
// below its parent (nil for Info itself). Its text is made only for a
// message.
type place struct {
	parent *place
	name   string
	index  int
	isItem bool
}

func (p *place) member(name string) place { return place{parent: p, name: name} }

func (p *place) item(i int) place { return place{parent: p, index: i, isItem: true} }

func (p *place) String() string {
	if p == nil {
		return "Info"
	}
	var b strings.Builder
	p.write(&b)
	return b.String()
}

func (p *place) write(b *strings.Builder) {
	if p.parent != nil {
		p.parent.write(b)
	}
	if p.isItem {
		b.WriteString("[" + strconv.Itoa(p.index) + "]")
		return
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(p.name)
}

// applyValue applies c to v, which is settable and is never changed in
// place where it may share memory with the Info the host sent: a struct is
// a copy, and a slice, a map or a pointer that changes is made anew.
func applyValue(v reflect.Value, c *change, at *place) error {
	if err := c.check(at, false, false); err != nil {
		return err
	}
	if c.Set != nil {
		return decodeInto(v, c.Set, at)
	}
	if hasOwnJSON(v.Type()) {
		return applyThroughJSON(v, c, at)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return fmt.Errorf("%s: changes inside a value that is not there (null)", at.String())
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(v.Elem())
		if err := applyValue(p.Elem(), c, at); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Struct:
		if c.Fields == nil {
			return fmt.Errorf("%s: changes the items of an object", at.String())
		}
		fields, ok := jsonFields(v.Type())
		if !ok {
			return applyThroughJSON(v, c, at)
		}
		for _, name := range sortedKeys(c.Fields) {
			sub, p := c.Fields[name], at.member(name)
			if err := sub.check(&p, true, false); err != nil {
				return err
			}
			index, ok := fields[name]
			if !ok {
				if sub.Remove || sub.setsEmpty() {
					continue
				}
				return fmt.Errorf("%s: this host's Info has no field %q here", at.String(), name)
			}
			f := v.FieldByIndex(index)
			if sub.Remove {
				f.SetZero()
				continue
			}
			if err := applyValue(f, sub, &p); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if c.Fields == nil {
			return fmt.Errorf("%s: changes the items of an object", at.String())
		}
		if v.Type().Key().Kind() != reflect.String {
			return applyThroughJSON(v, c, at)
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len()+len(c.Fields))
		for it := v.MapRange(); it.Next(); {
			m.SetMapIndex(it.Key(), it.Value())
		}
		for _, name := range sortedKeys(c.Fields) {
			sub, p := c.Fields[name], at.member(name)
			if err := sub.check(&p, true, false); err != nil {
				return err
			}
			key := reflect.ValueOf(name).Convert(v.Type().Key())
			if sub.Remove {
				m.SetMapIndex(key, reflect.Value{})
				continue
			}
			elem := reflect.New(v.Type().Elem()).Elem()
			if sub.Set == nil {
				old := m.MapIndex(key)
				if !old.IsValid() {
					return fmt.Errorf("%s: changes inside a member that is not there", p.String())
				}
				elem.Set(old)
			}
			if err := applyValue(elem, sub, &p); err != nil {
				return err
			}
			m.SetMapIndex(key, elem)
		}
		v.Set(m)
		return nil
	case reflect.Slice:
		if c.Items == nil {
			return fmt.Errorf("%s: changes the fields of a list", at.String())
		}
		s := reflect.MakeSlice(v.Type(), len(c.Items), len(c.Items))
		taken := make(map[int]int, len(c.Items))
		for i, item := range c.Items {
			p := at.item(i)
			if err := item.check(&p, false, true); err != nil {
				return err
			}
			if item.Set != nil {
				if err := decodeInto(s.Index(i), item.Set, &p); err != nil {
					return err
				}
				continue
			}
			j := *item.From
			if j < 0 || j >= v.Len() {
				return fmt.Errorf("%s: from %d, but the list it was sent has %d elements", p.String(), j, v.Len())
			}
			if k, dup := taken[j]; dup {
				return fmt.Errorf("%s: from %d, which item %d took already", p.String(), j, k)
			}
			taken[j] = i
			s.Index(i).Set(v.Index(j))
			if item.Fields == nil && item.Items == nil {
				continue
			}
			inner := *item
			inner.From = nil
			if err := applyValue(s.Index(i), &inner, &p); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	default:
		return fmt.Errorf("%s: changes inside a %s value, which has no fields or items", at.String(), jsonKind(v.Kind()))
	}
}

// applyThroughJSON applies c to a value whose JSON is its own (a
// json.RawMessage such as the template, a Quantity) or whose type the
// struct walk does not resolve: through its JSON document.
func applyThroughJSON(v reflect.Value, c *change, at *place) error {
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Errorf("%s: %w", at.String(), err)
	}
	tree, err := decodeTree(data)
	if err != nil {
		return fmt.Errorf("%s: %w", at.String(), err)
	}
	if tree, err = applyTree(tree, c, at); err != nil {
		return err
	}
	if data, err = json.Marshal(tree); err != nil {
		return fmt.Errorf("%s: %w", at.String(), err)
	}
	return decodeInto(v, data, at)
}

// applyTree is applyValue for a decoded JSON document, which it owns.
func applyTree(v any, c *change, at *place) (any, error) {
	if err := c.check(at, false, false); err != nil {
		return nil, err
	}
	if c.Set != nil {
		out, err := decodeTree(c.Set)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at.String(), err)
		}
		return out, nil
	}
	if c.Fields != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: changes the fields of a value that is not an object", at.String())
		}
		for _, name := range sortedKeys(c.Fields) {
			sub, p := c.Fields[name], at.member(name)
			if err := sub.check(&p, true, false); err != nil {
				return nil, err
			}
			if sub.Remove {
				delete(m, name)
				continue
			}
			old, ok := m[name]
			if !ok && sub.Set == nil {
				return nil, fmt.Errorf("%s: changes inside a member that is not there", p.String())
			}
			out, err := applyTree(old, sub, &p)
			if err != nil {
				return nil, err
			}
			m[name] = out
		}
		return m, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: changes the items of a value that is not a list", at.String())
	}
	out := make([]any, len(c.Items))
	taken := make(map[int]int, len(c.Items))
	for i, item := range c.Items {
		p := at.item(i)
		if err := item.check(&p, false, true); err != nil {
			return nil, err
		}
		if item.Set != nil {
			elem, err := decodeTree(item.Set)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.String(), err)
			}
			out[i] = elem
			continue
		}
		j := *item.From
		if j < 0 || j >= len(l) {
			return nil, fmt.Errorf("%s: from %d, but the list it was sent has %d elements", p.String(), j, len(l))
		}
		if k, dup := taken[j]; dup {
			return nil, fmt.Errorf("%s: from %d, which item %d took already", p.String(), j, k)
		}
		taken[j] = i
		out[i] = l[j]
		if item.Fields == nil && item.Items == nil {
			continue
		}
		inner := *item
		inner.From = nil
		elem, err := applyTree(l[j], &inner, &p)
		if err != nil {
			return nil, err
		}
		out[i] = elem
	}
	return out, nil
}

// decodeInto decodes data strictly into a new value of v's type and sets
// v to it: a field that the host's type does not have is refused, unless
// its value is empty (null, false, 0, "", {} or []), which is what a plugin
// built against a newer Info encodes for a field it did not set.
func decodeInto(v reflect.Value, data []byte, at *place) error {
	p := reflect.New(v.Type())
	err := decodeStrictInto(p.Interface(), data)
	if err != nil {
		tree, terr := decodeTree(data)
		if terr != nil {
			return fmt.Errorf("%s: %w", at.String(), err)
		}
		pruned, perr := json.Marshal(withoutEmptyUnknownFields(v.Type(), tree))
		if perr != nil || decodeStrictInto(p.Interface(), pruned) != nil {
			return fmt.Errorf("%s: %w", at.String(), err)
		}
	}
	v.Set(p.Elem())
	return nil
}

// decodeStrictInto decodes one JSON document into out, refusing fields
// that out's type does not have, and fields given twice. Kubernetes'
// decoder does it without copying data into a buffer first, as
// json.Decoder does, which is most of what applying changes allocates;
// it matches names exactly, as the struct walk of applyValue does.
func decodeStrictInto(out any, data []byte) error {
	strict, err := kjson.UnmarshalStrict(data, out)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// withoutEmptyUnknownFields returns the document v, a value of type t,
// without the members whose value is empty and that t (at their depth)
// does not have.
func withoutEmptyUnknownFields(t reflect.Type, v any) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if hasOwnJSON(t) {
		return v
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		fields, known := jsonFields(t)
		if !ok || !known {
			return v
		}
		for name, member := range m {
			index, ok := fields[name]
			switch {
			case ok:
				m[name] = withoutEmptyUnknownFields(t.FieldByIndex(index).Type, member)
			case isEmptyJSON(member):
				delete(m, name)
			}
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			for name, member := range m {
				m[name] = withoutEmptyUnknownFields(t.Elem(), member)
			}
		}
	case reflect.Slice, reflect.Array:
		if l, ok := v.([]any); ok {
			for i, elem := range l {
				l[i] = withoutEmptyUnknownFields(t.Elem(), elem)
			}
		}
	}
	return v
}

func isEmptyJSON(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return v == ""
	case json.Number:
		f, err := v.Float64()
		return err == nil && f == 0
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	marshalerType   = reflect.TypeFor[json.Marshaler]()
)

// hasOwnJSON reports whether a type encodes or decodes itself, or is an
// interface: its JSON is not its Go fields.
func hasOwnJSON(t reflect.Type) bool {
	return t.Kind() == reflect.Interface || t.Implements(marshalerType) || t.Implements(unmarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

// fieldCache holds, per struct type, its JSON field names (fieldsOf).
var fieldCache sync.Map // reflect.Type -> jsonFieldsEntry

type jsonFieldsEntry struct {
	fields map[string][]int
	ok     bool
}

// jsonFields returns the index of each field of a struct type by its JSON
// name, with the fields of embedded structs promoted as encoding/json
// promotes them, and false for a type it does not resolve (an embedded
// pointer, two fields of one name at one depth), which then takes the path
// through JSON.
func jsonFields(t reflect.Type) (map[string][]int, bool) {
	if e, ok := fieldCache.Load(t); ok {
		return e.(jsonFieldsEntry).fields, e.(jsonFieldsEntry).ok
	}
	fields := map[string][]int{}
	depthOf := map[string]int{}
	ok := collectFields(t, nil, fields, depthOf)
	fieldCache.Store(t, jsonFieldsEntry{fields: fields, ok: ok})
	return fields, ok
}

func collectFields(t reflect.Type, index []int, fields map[string][]int, depthOf map[string]int) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		at := append(slices.Clone(index), i)
		if f.Anonymous && name == "" {
			if f.Type.Kind() == reflect.Pointer {
				return false
			}
			if f.Type.Kind() == reflect.Struct {
				if !collectFields(f.Type, at, fields, depthOf) {
					return false
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if d, seen := depthOf[name]; seen {
			if d == len(at) {
				return false
			}
			if d < len(at) {
				continue
			}
		}
		fields[name], depthOf[name] = at, len(at)
	}
	return true
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	default:
		return "number"
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// patchOperation is one RFC 6902 operation of the patch that Info changes
// make for a host before protocol 1.2.
type patchOperation struct {
	Op    string          `json:"op"`
	From  string          `json:"from,omitempty"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// CreateChangesPatch returns the JSON Patch that turns before into after,
// two encodings of the same Info type by the same program, or nil when they
// are equal: the Info changes (CreateChanges) written as operations, for a
// host that takes patches. Like the changes, it names list elements by
// where they were in before, so applied to a document with more fields
// than before has (the host's), it keeps them.
func CreateChangesPatch(before, after []byte) ([]byte, error) {
	if bytes.Equal(before, after) {
		return nil, nil
	}
	b, err := decodeTree(before)
	if err != nil {
		return nil, fmt.Errorf("the Info before the changes: %w", err)
	}
	a, err := decodeTree(after)
	if err != nil {
		return nil, fmt.Errorf("the Info after the changes: %w", err)
	}
	c, err := diffValues(b, a)
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
