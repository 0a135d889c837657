package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	gomodulesjsonpatch "gomodules.xyz/jsonpatch/v2"

	"github.com/trainforge/trainforge/framework"
)

// patchableFields are the top-level fields of Info that a plugin may
// change. Version is the host's: a plugin cannot change what the document
// means.
var patchableFields = []string{"labels", "annotations", "runtimePolicy", "podSets", "template"}

// CreatePatch returns the RFC 6902 JSON Patch that turns before into after,
// or nil when they are equal.
func CreatePatch(before, after []byte) ([]byte, error) {
	if bytes.Equal(before, after) {
		return nil, nil
	}
	ops, err := gomodulesjsonpatch.CreatePatch(before, after)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, nil
	}
	return json.Marshal(ops)
}

// ApplyPatch applies a plugin's patch to doc, the Info document the plugin
// was sent, and stores the result in info. It refuses, leaving info as it
// was, a patch that does not apply, that touches anything but Info's own
// fields, or whose result is not an Info.
func ApplyPatch(info *framework.Info, doc, patch []byte) error {
	return ApplyPatchWithin(info, doc, patch, Limits{})
}

// patchOperation is one RFC 6902 operation, as the host decodes it to
// hold it to the rules of every answer (decode.go) before json-patch
// applies it: an operation with a member RFC 6902 does not define (a
// misspelt "valeu", "Path") is refused rather than ignored, as every other
// answer's unknown field is.
type patchOperation struct {
	Op    string          `json:"op"`
	From  string          `json:"from,omitempty"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// ApplyPatchWithin is ApplyPatch within the bounds of l: a patch with more
// than l.MaxPatchOperations operations is refused before any is checked,
// one whose copy operations add more than l.MaxCopyBytes (or
// l.MaxMessageBytes) is refused while it is applied, and the patch and
// the Info it makes are held to l's sizes and depth.
func ApplyPatchWithin(info *framework.Info, doc, patch []byte, l Limits) error {
	if len(patch) == 0 {
		return nil
	}
	var ops []patchOperation
	if err := l.decode(patchDoc, patch, &ops); err != nil {
		return err
	}
	if err := l.checkOperations(len(ops)); err != nil {
		return err
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return patchDoc.refuse(err)
	}
	for i, op := range p {
		if err := checkOperation(i, op); err != nil {
			return err
		}
	}
	opts := jsonpatch.NewApplyOptions()
	if n := l.copyBytes(); n > 0 {
		opts.AccumulatedCopySizeLimit = int64(n)
	}
	patched, err := p.ApplyWithOptions(doc, opts)
	if lerr := l.copyLimitError(err); lerr != nil {
		return lerr
	}
	if err != nil {
		return fmt.Errorf("the patch does not apply to the Info it was given: %w", err)
	}
	out := &framework.Info{}
	if err := l.decode(patchedInfoDoc, patched, out); err != nil {
		return err
	}
	*info = *out
	return nil
}

// ApplyInfo stores in info the whole changed Info a plugin answered with,
// which a plugin may send only when its view of Info is the host's: when
// it encodes the Info it decoded to the request's Info byte for byte, so
// that it dropped no field. It refuses, leaving info as it was, a document
// that is not an Info, has a field Info does not have, or changes the
// version: the rules of a patch.
func ApplyInfo(info *framework.Info, doc []byte) error {
	return ApplyInfoWithin(info, doc, Limits{})
}

// ApplyInfoWithin is ApplyInfo within the bounds of l.
func ApplyInfoWithin(info *framework.Info, doc []byte, l Limits) error {
	out := &framework.Info{}
	if err := l.decode(changedInfoDoc, doc, out); err != nil {
		return err
	}
	if out.Version != info.Version {
		return fmt.Errorf("the changed Info sets version %q where it was %q: that change (replace \"/version\") is outside Info: a plugin may change only Info's %s",
			out.Version, info.Version, strings.Join(patchableFields, ", "))
	}
	*info = *out
	return nil
}

func checkOperation(i int, op jsonpatch.Operation) error {
	kind := op.Kind()
	path, err := op.Path()
	if err != nil {
		return fmt.Errorf("patch operation %d (%s) has no path", i, kind)
	}
	what := fmt.Sprintf("%s %q", kind, path)
	paths := []string{path}
	if kind == "move" || kind == "copy" {
		from, err := op.From()
		if err != nil {
			return fmt.Errorf("patch operation %d (%s) has no from", i, what)
		}
		what += fmt.Sprintf(" from %q", from)
		paths = append(paths, from)
	}
	for _, p := range paths {
		if field := topLevelField(p); !slices.Contains(patchableFields, field) {
			return fmt.Errorf("patch operation %d (%s) is outside Info: a plugin may change only Info's %s",
				i, what, strings.Join(patchableFields, ", "))
		}
	}
	return nil
}

// topLevelField returns the first segment of a JSON pointer, unescaped, or
// "" for the root and for a pointer that does not start with "/" (which
// RFC 6901 forbids, and which json-patch would resolve from the root:
// "labels/version" is /version to it).
func topLevelField(pointer string) string {
	rest, ok := strings.CutPrefix(pointer, "/")
	if !ok {
		return ""
	}
	seg, _, _ := strings.Cut(rest, "/")
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
}
