//go:build !wasip1

package framework

import (
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// strategicMergeTemplate applies a runtime patch to a JobSet template with
// strategic merge (PatchedTemplate). It has a file of its own because a
// WebAssembly guest does without it (strategicmerge_wasip1.go).
func strategicMergeTemplate(tmpl, patch []byte) ([]byte, error) {
	return strategicpatch.StrategicMergePatch(tmpl, patch, trainer.JobSetTemplateSpec{})
}
