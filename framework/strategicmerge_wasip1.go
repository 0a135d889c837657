//go:build wasip1

package framework

import "errors"

// strategicMergeTemplate is not built into a WebAssembly guest: strategic
// merge (k8s.io/apimachinery/pkg/util/strategicpatch, with the OpenAPI
// and YAML packages it brings) adds about 1 MB to a module, and a plugin
// never needs it: the host makes Info (NewInfo) and sends it with every
// call. NewInfo and PatchedTemplate, called in a guest, fail on a runtime
// patch of the template.
func strategicMergeTemplate([]byte, []byte) ([]byte, error) {
	return nil, errors.New("strategic merge of runtime patches is the host's work: a WebAssembly plugin receives Info made already")
}
