package remote

import (
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// Limits bound what a Client accepts from a plugin, so that a plugin that
// answers too much fails its call instead of costing the host its memory
// or its time. They bound every answer format alike (decode.go). A zero
// field sets no bound. The plugin host fills them from the configuration
// file's pluginHost.limits.
type Limits struct {
	// MaxMessageBytes bounds the size of each JSON document of an answer
	// but built objects (a whole Info, a patch, Info changes, a status, a
	// bad value), and of the Info a patch or Info changes make
	// (pluginHost.limits.maxMessageBytes, which also bounds the whole
	// gRPC answer).
	MaxMessageBytes int
	// MaxDepth bounds how deep each JSON document of an answer, and the
	// Info it makes, is nested (pluginHost.limits.maxDepth).
	MaxDepth int
	// MaxObjects bounds the objects of one Build answer
	// (pluginHost.limits.maxObjects).
	MaxObjects int
	// MaxObjectBytes bounds the JSON size of each built object
	// (pluginHost.limits.maxObjectBytes), in place of MaxMessageBytes.
	MaxObjectBytes int
	// MaxPatchOperations bounds the operations of one Enforce patch
	// (pluginHost.limits.maxPatchOperations).
	MaxPatchOperations int
	// MaxCopyBytes bounds the bytes that the copy operations of one patch
	// may add to Info: without it, a few dozen copies of a copy make a
	// document of gigabytes. Zero: MaxMessageBytes.
	MaxCopyBytes int
}

// copyBytes is the bound of a patch's copies.
func (l Limits) copyBytes() int {
	if l.MaxCopyBytes > 0 {
		return l.MaxCopyBytes
	}
	return l.MaxMessageBytes
}

// LimitError is an answer refused because it exceeds a bound. Its message
// names the bound as the configuration file does, with its value.
type LimitError struct {
	// What is counted, as the message says it: "objects", "patch operations".
	What string
	// Got is how many (or how large) the answer had; 0 when not known.
	Got int
	// Field is the configuration field of the bound, e.g.
	// pluginHost.limits.maxObjects.
	Field string
	// Max is the bound.
	Max int
	// Detail says more, e.g. which object.
	Detail string
}

func (e *LimitError) Error() string {
	msg := fmt.Sprintf("%s %d %s, more than %s %d", e.Detail, e.Got, e.What, e.Field, e.Max)
	if e.Got == 0 {
		msg = fmt.Sprintf("%s more %s than %s %d", e.Detail, e.What, e.Field, e.Max)
	}
	return msg
}

// Configuration fields of the bounds, for messages.
const (
	FieldMaxObjects         = "pluginHost.limits.maxObjects"
	FieldMaxObjectBytes     = "pluginHost.limits.maxObjectBytes"
	FieldMaxPatchOperations = "pluginHost.limits.maxPatchOperations"
	FieldMaxMessageBytes    = "pluginHost.limits.maxMessageBytes"
	FieldMaxDepth           = "pluginHost.limits.maxDepth"
)

// checkObjects refuses a Build answer with too many objects, before any
// is decoded (decode bounds each one's size).
func (l Limits) checkObjects(n int) error {
	if l.MaxObjects > 0 && n > l.MaxObjects {
		return &LimitError{Detail: "the answer has", Got: n, What: "objects", Field: FieldMaxObjects, Max: l.MaxObjects}
	}
	return nil
}

// checkOperations refuses a patch with too many operations, n, before
// json-patch decodes it again.
func (l Limits) checkOperations(n int) error {
	if l.MaxPatchOperations > 0 && n > l.MaxPatchOperations {
		return &LimitError{Detail: "the patch has", Got: n, What: "operations", Field: FieldMaxPatchOperations, Max: l.MaxPatchOperations}
	}
	return nil
}

// copyLimitError turns json-patch's copy-size error into a LimitError.
func (l Limits) copyLimitError(err error) error {
	var ce *jsonpatch.AccumulatedCopySizeError
	if l.copyBytes() > 0 && errors.As(err, &ce) {
		return &LimitError{Detail: "the patch's copy operations add", What: "bytes", Field: FieldMaxMessageBytes, Max: l.copyBytes()}
	}
	return nil
}
