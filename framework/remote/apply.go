package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/trainforge/trainforge/framework"
)

// The host's side of Info changes: one applier, on the JSON document of
// the Info the host sent, then the one decoder (decode.go) for the Info
// they make. The plugin's side is diff.go.

// ApplyInfoChanges applies a plugin's Info changes (protocol 1.2) to info,
// the Info the host sent. Everything the changes do not mention stays as
// it was: that is how the host keeps the fields the plugin does not know.
// It refuses, leaving info as it was, changes that are not an Info-changes
// document, touch anything but Info's own fields, reach a member or element
// that is not there, or set a field, or a value, that Info does not have.
func ApplyInfoChanges(info *framework.Info, doc []byte) error {
	return ApplyInfoChangesWithin(info, doc, Limits{})
}

// ApplyInfoChangesWithin is ApplyInfoChanges within the bounds of l.
func ApplyInfoChangesWithin(info *framework.Info, doc []byte, l Limits) error {
	return applyInfoChanges(info, nil, doc, l)
}

// applyInfoChanges is ApplyInfoChangesWithin for a caller that has info's
// encoding already (sent), or nil.
func applyInfoChanges(info *framework.Info, sent, doc []byte, l Limits) error {
	if len(doc) == 0 {
		return nil
	}
	c := &change{}
	if err := l.decode(changesDoc, doc, c); err != nil {
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
	if sent == nil {
		var err error
		if sent, err = json.Marshal(info); err != nil {
			return err
		}
	}
	tree, err := decodeTree(sent)
	if err != nil {
		return err
	}
	if tree, err = applyChange(tree, c, nil); err != nil {
		return fmt.Errorf("the Info changes do not apply to the Info they were given: %w", err)
	}
	made, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	out := &framework.Info{}
	unknown, err := l.decodeKnown(changesInfoDoc, made, out)
	if err != nil {
		return err
	}
	for _, path := range unknown {
		if err := judgeUnknown(tree, c, path); err != nil {
			return fmt.Errorf("the Info changes do not apply to the Info they were given: %w", err)
		}
	}
	*info = *out
	return nil
}

// applyChange applies c to v, a decoded JSON document it may change, and
// returns the result.
func applyChange(v any, c *change, at *place) (any, error) {
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
			return nil, notContainer(v, "fields", at)
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
			out, err := applyChange(old, sub, &p)
			if err != nil {
				return nil, err
			}
			m[name] = out
		}
		return m, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, notContainer(v, "items", at)
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
		elem, err := applyChange(l[j], &inner, &p)
		if err != nil {
			return nil, err
		}
		out[i] = elem
	}
	return out, nil
}

// notContainer is the error of fields or items changed in v, which has
// none of them.
func notContainer(v any, what string, at *place) error {
	switch v.(type) {
	case map[string]any:
		return fmt.Errorf("%s: changes the items of an object", at.String())
	case []any:
		return fmt.Errorf("%s: changes the fields of a list", at.String())
	case nil:
		return fmt.Errorf("%s: changes inside a value that is not there (null)", at.String())
	case string:
		return fmt.Errorf("%s: changes inside a string value, which has no %s", at.String(), what)
	case bool:
		return fmt.Errorf("%s: changes inside a boolean value, which has no %s", at.String(), what)
	default:
		return fmt.Errorf("%s: changes inside a number value, which has no %s", at.String(), what)
	}
}

// judgeUnknown decides on a field that the Info the changes made has and
// this host's Info does not, at path (as the decoder names it, in tree):
// the protocol ignores it when its value is empty (null, false, 0, "", {}
// or []), which is what a plugin built against a newer Info encodes for a
// field it did not set, and refuses it otherwise, saying where the
// changes put it: in a value they set, or as a member they changed.
func judgeUnknown(tree any, c *change, path string) error {
	steps := splitPath(path)
	v, found := tree, true
	for _, s := range steps {
		switch parent := v.(type) {
		case map[string]any:
			v, found = parent[s.name], found && s.member
		case []any:
			found = found && !s.member && s.index < len(parent)
			if found {
				v = parent[s.index]
			}
		default:
			found = false
		}
	}
	// A path that does not lead to a value is refused: only a value seen
	// empty is ignored.
	if found && isEmptyJSON(v) {
		return nil
	}
	var at *place
	for i, s := range steps {
		if c != nil && c.Set != nil && i > 0 {
			return fmt.Errorf("%s: unknown field %q", at.String(), joinPath(steps[i:]))
		}
		if s.member && i == len(steps)-1 {
			return fmt.Errorf("%s: this host's Info has no field %q here", at.String(), s.name)
		}
		next := at.item(s.index)
		if s.member {
			next = at.member(s.name)
		}
		at = &next
		switch {
		case c == nil:
		case s.member:
			c = c.Fields[s.name]
		case s.index < len(c.Items):
			c = c.Items[s.index]
		default:
			c = nil
		}
	}
	return fmt.Errorf("unknown field %q", path)
}

// step is one member name or list index of a decoder's field path.
type step struct {
	member bool
	name   string
	index  int
}

// splitPath splits a field path as sigs.k8s.io/json writes it
// ("podSets[0].containers[1].restartPolicy") into its steps. Info's struct
// field names have no "." or "[", and the maps on the way to a struct
// field (none in Info) would be the only other source of one.
func splitPath(path string) []step {
	var out []step
	for _, part := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, step{member: true, name: name})
		}
		for rest != "" {
			n, after, _ := strings.Cut(rest, "]")
			i, _ := strconv.Atoi(n)
			out = append(out, step{index: i})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}

func joinPath(steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		if !s.member {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	return b.String()
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
