package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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
