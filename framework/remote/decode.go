package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	kjson "sigs.k8s.io/json"
)

// Every JSON document the host takes from a plugin (a whole Info, a JSON
// Patch and the Info it makes, Info changes and the Info they make, a
// built object, a status, a field error's bad value) is decoded here, by
// one decoder with one set of rules, so that a plugin's answer means the
// same in every format:
//
//   - at most the bound of its kind in bytes (Limits.MaxObjectBytes for a
//     built object, Limits.MaxMessageBytes for the others) and
//     Limits.MaxDepth levels deep;
//   - one JSON value, with no key given twice in any object, the raw
//     parts of Info (template, runtimePolicy) included;
//   - field names matched case-sensitively, and a field the Go type does
//     not have refused, with its path (sigs.k8s.io/json's UnmarshalStrict,
//     the decoder of Kubernetes' API machinery);
//   - a value of the wrong type refused with its path.
//
// The walk that checks depth and keys (scanJSON) is encoding/json's
// tokenizer: the strict decoder stops at its own depth (10000) and does
// not look inside raw parts.

// document names one JSON document of an answer, for messages: what it is
// ("the changed Info") and what it fails to be when it does not decode
// ("is not an Info").
type document struct {
	name  string
	notA  string
	bytes sizeBound
}

// sizeBound picks the bound of a document's size among Limits.
type sizeBound int

const (
	messageBytes sizeBound = iota
	objectBytes
)

var (
	changedInfoDoc = document{name: "the changed Info", notA: "is not an Info"}
	patchedInfoDoc = document{name: "the patched Info", notA: "is not an Info"}
	changesInfoDoc = document{name: "the Info the changes make", notA: "is not an Info"}
	changesDoc     = document{name: "the Info changes", notA: `are not an Info-changes document ({"set": value}, {"fields": {...}}, {"items": [...]}, {"remove": true}, {"from": n})`}
	patchDoc       = document{name: "the patch", notA: "is not an RFC 6902 JSON Patch (a JSON array of operations: add, remove, replace, move, copy, test)"}
	statusDoc      = document{name: "the status", notA: "is not a TrainJobStatus"}
)

func objectDoc(i int) document {
	return document{name: fmt.Sprintf("object %d", i), notA: "is not a Kubernetes object", bytes: objectBytes}
}

func badValueDoc(i int) document {
	return document{name: fmt.Sprintf("field_errors[%d].bad_value", i), notA: "is not a JSON value"}
}

// decode decodes data, one document of an answer, into out with the rules
// above.
func (l Limits) decode(d document, data []byte, out any) error {
	unknown, err := l.decodeKnown(d, data, out)
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		return d.refuse(unknownFieldsError(unknown))
	}
	return nil
}

// decodeKnown is decode that returns the paths of the fields out's type
// does not have instead of refusing them, for the caller to judge (Info
// changes ignore such a field when its value is empty); out holds the
// rest.
func (l Limits) decodeKnown(d document, data []byte, out any) (unknown []string, err error) {
	max, field := l.MaxMessageBytes, FieldMaxMessageBytes
	if d.bytes == objectBytes {
		max, field = l.MaxObjectBytes, FieldMaxObjectBytes
	}
	if max > 0 && len(data) > max {
		return nil, &LimitError{Detail: d.name + " has", Got: len(data), What: "bytes", Field: field, Max: max}
	}
	if _, err := scanJSON(data, l.MaxDepth, -1); err != nil {
		var de *depthError
		if errors.As(err, &de) {
			return nil, &LimitError{Detail: fmt.Sprintf("%s at %s is nested", d.name, de.path), Got: l.MaxDepth + 1, What: "levels deep", Field: FieldMaxDepth, Max: l.MaxDepth}
		}
		return nil, d.refuse(err)
	}
	strict, err := kjson.UnmarshalStrict(data, out)
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if path, _ := scanJSON(data, 0, te.Offset); path != "" {
				return nil, d.refuse(fmt.Errorf("%s: %w", path, err))
			}
		}
		return nil, d.refuse(err)
	}
	for _, e := range strict {
		var fe kjson.FieldError
		if !errors.As(e, &fe) || !strings.HasPrefix(e.Error(), "unknown field ") {
			// Duplicates are the scan's to find; any other strict
			// check the library adds is refused as it words it.
			return nil, d.refuse(e)
		}
		unknown = append(unknown, fe.FieldPath())
	}
	return unknown, nil
}

func (d document) refuse(err error) error {
	return fmt.Errorf("%s %s: %w", d.name, d.notA, err)
}

func unknownFieldsError(paths []string) error {
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = strconv.Quote(p)
	}
	return fmt.Errorf("unknown field %s", strings.Join(quoted, ", "))
}

// depthError is a document nested deeper than the bound, at path.
type depthError struct{ path string }

func (e *depthError) Error() string { return e.path + ": nested too deep" }

// frame is an object or a list that scanJSON is inside.
type frame struct {
	object  bool
	wantKey bool
	key     string
	index   int
	keys    map[string]struct{}
}

// scanJSON walks data, which must be one JSON value, and refuses it when
// it is not, when an object gives a key twice, or when it is nested more
// than maxDepth levels (0: no bound). With at >= 0 it stops at the byte
// offset at and returns the path of the value that offset lies in, as a
// decoder's error names it ("podSets[0].count").
func scanJSON(data []byte, maxDepth int, at int64) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	done, last := false, ""
	for {
		if at >= 0 && dec.InputOffset() >= at {
			return last, nil
		}
		tok, err := dec.Token()
		switch {
		case err == io.EOF && done:
			return last, nil
		case err == io.EOF && len(stack) == 0:
			return last, errors.New("no JSON value")
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			inside := "the document"
			if p := pathOf(stack, ""); p != "" {
				inside = strconv.Quote(p)
			}
			return last, fmt.Errorf("the JSON is cut short at byte %d, inside %s", len(data), inside)
		case done:
			return last, fmt.Errorf("data after the document, at byte %d", dec.InputOffset())
		case err != nil:
			return last, fmt.Errorf("%w, at byte %d", err, dec.InputOffset())
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			top := &stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				done = valueEnded(stack)
				continue
			}
			key, _ := tok.(string)
			if _, dup := top.keys[key]; dup {
				return last, fmt.Errorf("duplicate field %q", pathOf(stack, key))
			}
			if top.keys == nil {
				top.keys = map[string]struct{}{}
			}
			top.keys[key] = struct{}{}
			top.key, top.wantKey = key, false
			continue
		}
		if tok == json.Delim(']') {
			stack = stack[:len(stack)-1]
			done = valueEnded(stack)
			continue
		}
		last = pathOf(stack, "")
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if maxDepth > 0 && len(stack) >= maxDepth {
				return last, &depthError{path: pathOrRoot(last)}
			}
			stack = append(stack, frame{object: tok == json.Delim('{'), wantKey: true})
		default:
			done = valueEnded(stack)
		}
	}
}

// valueEnded moves the innermost container past the value that ended, and
// reports whether that was the document.
func valueEnded(stack []frame) bool {
	if len(stack) == 0 {
		return true
	}
	top := &stack[len(stack)-1]
	if top.object {
		top.wantKey = true
	} else {
		top.index++
	}
	return false
}

// pathOf is the path of the value the stack is at, then of key in it when
// key is not "": members joined by ".", elements as "[i]", the way
// sigs.k8s.io/json names fields.
func pathOf(stack []frame, key string) string {
	var b strings.Builder
	member := func(k string) {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	for _, f := range stack {
		switch {
		case f.object && !f.wantKey:
			member(f.key)
		case !f.object:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	if key != "" {
		member(key)
	}
	return b.String()
}

func pathOrRoot(p string) string {
	if p == "" {
		return "the root"
	}
	return p
}
