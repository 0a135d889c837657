package mpi

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyThePublicAPI: a vendor-style plugin is written as a third
// party would write it, against sdk, api and framework's public types,
// never builtin or internal.
func TestImportsOnlyThePublicAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/trainforge/trainforge/builtin") || strings.HasPrefix(pkg, "github.com/trainforge/trainforge/internal") {
			t.Errorf("the plugin depends on %s", pkg)
		}
	}
}
