package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// BinEnv names the directory of prebuilt binaries: the Makefile's test
// targets build them once into bin/ (make test-bin) and set it, so that
// no suite links them again.
const BinEnv = "TRAINFORGE_TEST_BIN"

// Binaries are main packages of the module (paths inside it, such as
// cmd/trainforge-controller) that a suite runs as processes. They are
// built once per test run, all with one go build (which compiles and links
// them in parallel), on the first Dir or Path; every later call reuses
// them.
type Binaries struct {
	packages []string

	once sync.Once
	dir  string
	tmp  bool
	err  error
}

// NewBinaries returns the binaries of packages, not yet built.
func NewBinaries(packages ...string) *Binaries {
	return &Binaries{packages: packages}
}

// Dir is the directory holding every binary, each named as go build names
// it (the package's last element).
func (b *Binaries) Dir() (string, error) {
	b.once.Do(b.build)
	return b.dir, b.err
}

// Has reports whether pkg is one of the packages.
func (b *Binaries) Has(pkg string) bool { return slices.Contains(b.packages, pkg) }

// Path is the binary of pkg, which must be one of the packages.
func (b *Binaries) Path(pkg string) (string, error) {
	if !b.Has(pkg) {
		return "", fmt.Errorf("%s is not among the binaries this suite builds (%s): add it to its NewBinaries", pkg, strings.Join(b.packages, ", "))
	}
	dir, err := b.Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, path.Base(pkg)), nil
}

// Cleanup removes the binaries it built (not those of BinEnv).
func (b *Binaries) Cleanup() {
	if b.tmp {
		_ = os.RemoveAll(b.dir)
	}
}

func (b *Binaries) build() {
	if dir := os.Getenv(BinEnv); dir != "" {
		b.dir, b.err = filepath.Abs(dir)
		for _, p := range b.packages {
			if _, err := os.Stat(filepath.Join(b.dir, path.Base(p))); err != nil && b.err == nil {
				b.err = fmt.Errorf("%s=%s has no %s: run `make test-bin`, or unset %s to build the binaries in the test", BinEnv, dir, path.Base(p), BinEnv)
			}
		}
		return
	}
	if b.dir, b.err = os.MkdirTemp("", "trainforge-test-bin-"); b.err != nil {
		return
	}
	b.tmp = true
	b.err = Build(b.dir, b.packages...)
}

// Build builds main packages of the module (paths inside it) into dir
// with one go build.
func Build(dir string, packages ...string) error {
	r, err := RepoRoot()
	if err != nil {
		return err
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, p := range packages {
		args = append(args, Module+"/"+p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = r
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}
