package install

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// TestImages checks that every image the installs name is one the
// repository builds: the controller's (Dockerfile) and each plugin
// sidecar's (plugins/Dockerfile, one image per cmd/trainforge-plugin-<name>,
// listed in the Makefile's IMAGE_PLUGINS), and that both Dockerfiles make
// static binaries on distroless as user 65532.
func TestImages(t *testing.T) {
	root := repoRoot(t)
	mk := string(mustRead(t, "Makefile"))
	m := regexp.MustCompile(`(?m)^IMAGE_PLUGINS := (.*)$`).FindStringSubmatch(mk)
	if m == nil {
		t.Fatal("no IMAGE_PLUGINS in the Makefile")
	}
	built := strings.Fields(m[1])
	for _, p := range built {
		if _, err := os.Stat(filepath.Join(root, "cmd", "trainforge-plugin-"+p)); err != nil {
			t.Errorf("IMAGE_PLUGINS has %s, but there is no cmd/trainforge-plugin-%s", p, p)
		}
	}
	for _, f := range []string{"Dockerfile", "plugins/Dockerfile"} {
		d := string(mustRead(t, f))
		for _, want := range []string{"CGO_ENABLED=0", "FROM gcr.io/distroless/static-debian12:nonroot", "USER 65532:65532"} {
			if !strings.Contains(d, want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
	wasmImage := regexp.MustCompile(`^ghcr\.io/trainforge/trainforge-plugin-([a-z0-9]+)-wasm:v0\.1\.0$`)
	image := regexp.MustCompile(`^ghcr\.io/trainforge/(trainforge-controller|trainforge-plugin-([a-z0-9]+)):v0\.1\.0$`)
	for _, r := range renders(t) {
		dep := convert[appsv1.Deployment](t, find(t, r.objs, "Deployment", "trainforge-controller"))
		spec := dep.Spec.Template.Spec
		for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
			m := image.FindStringSubmatch(c.Image)
			switch {
			case m == nil:
				t.Errorf("%s: container %s runs %s, an image the repository does not build", r.name, c.Name, c.Image)
			case c.Name == "manager" && m[1] != "trainforge-controller":
				t.Errorf("%s: the manager runs %s", r.name, c.Image)
			case c.Name != "manager" && !slices.Contains(built, m[2]):
				t.Errorf("%s: container %s runs %s, which make images does not build", r.name, c.Name, c.Image)
			}
		}
		// A wasm module's image volume: trainforge-plugin-<name>-wasm of
		// plugins/wasm.Dockerfile, which make images builds for each plugin.
		for _, v := range spec.Volumes {
			if v.Image == nil {
				continue
			}
			m := wasmImage.FindStringSubmatch(v.Image.Reference)
			if m == nil || !slices.Contains(built, m[1]) || !strings.Contains(mk, "plugins/wasm.Dockerfile") {
				t.Errorf("%s: volume %s mounts %s, an image the repository does not build", r.name, v.Name, v.Image.Reference)
			}
		}
	}
}
