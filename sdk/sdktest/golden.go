package sdktest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// update is the -update flag of the tests of a package that imports
// sdktest: Golden then rewrites the golden files instead of comparing.
var update = flag.Bool("update", false, "rewrite the golden files of sdktest.Golden with the plugin's current output")

// goldenHeader starts every golden file.
const goldenHeader = "# Written by sdktest.Golden: the Info after the plugin's Enforce points and\n" +
	"# the objects its Build returns. Do not edit; rewrite with go test -update.\n"

// goldenDoc is the content of a golden file.
type goldenDoc struct {
	Info    *framework.Info              `json:"info"`
	Objects []*unstructured.Unstructured `json:"objects"`
	// CreatedOnce names the objects the host creates once
	// (framework.Object.CreateOnce), as "<kind> <name>".
	CreatedOnce []string `json:"createdOnce,omitempty"`
}

var caseNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// Golden runs each case through the plugin over gRPC, as the host would
// (Configure with the case's args, the Enforce points, then Build) and
// compares the YAML of the resulting Info and objects with the golden file
// dir/<case name>.golden.yaml. Each case is a subtest. On a difference it
// shows a diff and fails; after an intended change, rewrite the golden
// files with the -update flag, which this package registers, and review
// the change in version control:
//
//	go test ./path/to/your/plugin -run TestGolden -update
//
// (Name the package: go test ./... -update fails in the packages that do
// not import sdktest, which do not know the flag. A package that imports
// sdktest cannot define a flag named "update" of its own.)
func Golden(t *testing.T, p framework.Plugin, dir string, cases ...Case) {
	t.Helper()
	golden(t, Connect(t, p), dir, cases)
}

// GoldenRPC is Golden for a plugin reached through rpc, however it runs: a
// plugin binary, in any language, started by the host (package
// framework/external), for example:
//
//	p, err := external.Start(ctx, external.Options{Command: "/usr/bin/python3", Args: []string{"plugin.py"}})
//	...
//	rpc, err := p.RPC()
//	...
//	sdktest.GoldenRPC(t, rpc, "testdata", cases...)
func GoldenRPC(t *testing.T, rpc pluginv1.PluginServiceClient, dir string, cases ...Case) {
	t.Helper()
	golden(t, remote.NewClient(rpc, remote.Limits{}), dir, cases)
}

func golden(t *testing.T, client *remote.Client, dir string, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Helper()
			if !caseNameRE.MatchString(tc.Name) {
				t.Fatalf("case name %q cannot name a golden file: use letters, digits, '-', '_' and '.'", tc.Name)
			}
			got, err := goldenOutput(context.Background(), client, tc)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.Name+".golden.yaml")
			if err := compareGolden(path, got, *update); err != nil {
				if *update {
					t.Fatal(err)
				}
				hint := "If the change is intended, rewrite the golden files with"
				if errors.Is(err, fs.ErrNotExist) {
					hint = "Write it with"
				}
				t.Errorf("%v\n%s:\n\tgo test -run '%s' -update", err, hint, regexp.QuoteMeta(t.Name()))
			} else if *update {
				t.Logf("wrote %s", path)
			}
		})
	}
}

// goldenOutput runs a case through the plugin and returns the golden YAML.
func goldenOutput(ctx context.Context, client *remote.Client, tc Case) ([]byte, error) {
	if tc.Runtime == nil || tc.Job == nil {
		return nil, errors.New("the case needs a Runtime and a Job")
	}
	d, points, err := client.Describe(ctx)
	if err != nil {
		return nil, fmt.Errorf("the host refuses the description: %w", err)
	}
	impl := client.Implementation(points)
	if err := configure(ctx, client, tc.Args); err != nil {
		return nil, fmt.Errorf("Configure: %w", err)
	}
	info, err := framework.NewInfo(tc.Job, tc.Runtime)
	if err != nil {
		return nil, fmt.Errorf("the runtime and the TrainJob do not make an Info: %w", err)
	}
	doc := goldenDoc{Info: info, Objects: []*unstructured.Unstructured{}}
	keys, err := info.PolicyKeys()
	if err != nil {
		return nil, err
	}
	if d.TakesPart(keys) {
		if err := enforce(ctx, impl, info, tc.Job); err != nil {
			return nil, err
		}
		if impl.Builder != nil {
			objs, err := client.Build(ctx, mustCopy(info), tc.Job)
			if err != nil {
				return nil, fmt.Errorf("Build failed: %w", err)
			}
			again, err := client.Build(ctx, mustCopy(info), tc.Job)
			if err != nil {
				return nil, fmt.Errorf("the second Build failed: %w", err)
			}
			doc.Objects = append(doc.Objects, maskCreatedOnce(objs, again)...)
			for _, o := range objs {
				if o.CreateOnce {
					doc.CreatedOnce = append(doc.CreatedOnce, o.GetKind()+" "+o.GetName())
				}
			}
		}
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding the output: %w", err)
	}
	return append([]byte(goldenHeader), out...), nil
}

// compareGolden compares got with the golden file at path, or writes it
// there when update is set.
func compareGolden(path string, got []byte, update bool) error {
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("there is no golden file %s yet: %w", path, err)
	}
	if err != nil {
		return err
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		return fmt.Errorf("the plugin's output differs from %s (-golden +now):\n%s", path, diff)
	}
	return nil
}

// differsMark replaces, in golden files, the values of an object created
// once that differ from one Build to the next.
const differsMark = "<created once: differs on every Build>"

// maskCreatedOnce returns objs with the values that differ between objs and
// again, two Builds of the same input, replaced by differsMark in the
// objects created once (framework.CreateOnce): a generated key would make
// the golden file change on every run, while its kind, name and every
// value that stays the same are still compared.
func maskCreatedOnce(objs, again []framework.Object) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for i, built := range objs {
		o := built.Unstructured
		if o != nil && built.CreateOnce && i < len(again) && again[i].Unstructured != nil {
			o = &unstructured.Unstructured{Object: maskDiffering(o.Object, again[i].Object).(map[string]any)}
		}
		out = append(out, o)
	}
	return out
}

// maskDiffering returns a with every value that differs from b's at the
// same place replaced by differsMark.
func maskDiffering(a, b any) any {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return differsMark
		}
		out := make(map[string]any, len(av))
		for k, v := range av {
			out[k] = maskDiffering(v, bv[k])
		}
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok || len(bv) != len(av) {
			return differsMark
		}
		out := make([]any, len(av))
		for i := range av {
			out[i] = maskDiffering(av[i], bv[i])
		}
		return out
	default:
		if !reflect.DeepEqual(a, b) {
			return differsMark
		}
		return a
	}
}
