// Package frameworktest helps plugin authors, and Trainforge's own tests,
// build realistic Info for table-driven tests: the seed examples, strict
// decoding of runtimes and TrainJobs written in YAML, and NewInfo that fails
// the test instead of returning an error.
//
// A typical test of an ML plugin:
//
//	spec, job := frameworktest.Seed(t, frameworktest.SeedTorch)
//	job.Spec.Trainer.NumNodes = ptr.To[int32](4)
//	info := frameworktest.NewInfo(t, job, spec)
//	err := plugin.EnforceMLPolicy(ctx, info, job)
//
// Every call decodes afresh, so a test may change what it gets.
package frameworktest

import (
	"bufio"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// The seed examples: each file holds a ClusterTrainingRuntime and a TrainJob
// that uses it, and its comments say what Trainforge must make of them.
const (
	// SeedPlainML is a runtime without an ML framework (PlainML) and a
	// TrainJob "first-job" that asks for 2 nodes.
	SeedPlainML = "seed-plainml.yaml"
	// SeedTorch is a Torch runtime and a TrainJob "first-job" that asks for
	// 3 nodes, 5 processes per node and adds an env var.
	SeedTorch = "seed-torch.yaml"
	// SeedCoscheduling is a Torch runtime of 10 nodes with gang scheduling
	// and a TrainJob "gang-job".
	SeedCoscheduling = "seed-coscheduling.yaml"
)

//go:embed testdata/*.yaml
var seeds embed.FS

// SeedFiles returns the names of the seed examples, sorted.
func SeedFiles() []string {
	names, err := fs.Glob(seeds, "testdata/*.yaml")
	if err != nil {
		panic(err) // the pattern is constant and valid
	}
	for i, n := range names {
		names[i] = strings.TrimPrefix(n, "testdata/")
	}
	return names
}

// Seed decodes the seed example of the given file (SeedPlainML, SeedTorch,
// SeedCoscheduling) and returns its runtime's spec and its TrainJob. The
// TrainJob has no namespace, as in the example.
func Seed(t testing.TB, file string) (*trainer.TrainingRuntimeSpec, *trainer.TrainJob) {
	t.Helper()
	data, err := seeds.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatalf("no seed example %q (there are %s)", file, strings.Join(SeedFiles(), ", "))
	}
	return Runtime(t, string(data)), TrainJob(t, string(data))
}

// Runtime decodes, strictly, the runtime of a YAML fixture and returns its
// spec. The runtime is a TrainingRuntime or a ClusterTrainingRuntime, or a
// bare TrainingRuntimeSpec (no kind) when the fixture is that one document.
// The fixture may hold several documents separated by "---", for example a
// runtime and its TrainJob: exactly one must be a runtime.
func Runtime(t testing.TB, doc string) *trainer.TrainingRuntimeSpec {
	t.Helper()
	spec, err := ParseRuntime(doc)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return spec
}

// ParseRuntime is Runtime that returns an error instead of failing a test.
func ParseRuntime(doc string) (*trainer.TrainingRuntimeSpec, error) {
	d, err := pick(doc, "runtime", trainer.TrainingRuntimeKind, trainer.ClusterTrainingRuntimeKind)
	if err != nil {
		return nil, err
	}
	switch d.kind {
	case trainer.TrainingRuntimeKind:
		rt := &trainer.TrainingRuntime{}
		return &rt.Spec, decode(d.text, rt)
	case trainer.ClusterTrainingRuntimeKind:
		rt := &trainer.ClusterTrainingRuntime{}
		return &rt.Spec, decode(d.text, rt)
	default:
		spec := &trainer.TrainingRuntimeSpec{}
		return spec, decode(d.text, spec)
	}
}

// TrainJob decodes, strictly, the TrainJob of a YAML fixture. The fixture
// may hold several documents separated by "---": exactly one must be of kind
// TrainJob. A fixture of one document may leave the kind out.
func TrainJob(t testing.TB, doc string) *trainer.TrainJob {
	t.Helper()
	job, err := ParseTrainJob(doc)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return job
}

// ParseTrainJob is TrainJob that returns an error instead of failing a
// test.
func ParseTrainJob(doc string) (*trainer.TrainJob, error) {
	d, err := pick(doc, "TrainJob", trainer.TrainJobKind)
	if err != nil {
		return nil, err
	}
	job := &trainer.TrainJob{}
	return job, decode(d.text, job)
}

// NewInfo is framework.NewInfo that fails the test on an error.
func NewInfo(t testing.TB, job *trainer.TrainJob, spec *trainer.TrainingRuntimeSpec, opts ...framework.InfoOption) *framework.Info {
	t.Helper()
	info, err := framework.NewInfo(job, spec, opts...)
	if err != nil {
		t.Fatalf("NewInfo: %v", err)
	}
	return info
}

// document is one YAML document of a fixture and its kind ("" for none).
type document struct {
	kind string
	text string
}

// documents splits a fixture into its documents, leaving out empty ones
// (only blanks and comments).
func documents(fixture string) ([]document, error) {
	var out []document
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(fixture)))
	for {
		text, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("splitting the YAML documents: %w", err)
		}
		var head map[string]any
		if err := yaml.Unmarshal(text, &head); err != nil {
			return nil, fmt.Errorf("decoding a YAML document: %w\n%s", err, text)
		}
		if len(head) == 0 {
			continue
		}
		kind, _ := head["kind"].(string)
		out = append(out, document{kind: kind, text: string(text)})
	}
}

// pick returns the one document of the fixture whose kind is one of kinds,
// or the fixture's only document when it has no kind. Documents of a kind
// that is neither a runtime nor a TrainJob are an error: they are typos.
func pick(fixture, what string, kinds ...string) (document, error) {
	docs, err := documents(fixture)
	if err != nil {
		return document{}, err
	}
	if len(docs) == 1 && docs[0].kind == "" {
		return docs[0], nil
	}
	var found []document
	for _, d := range docs {
		switch d.kind {
		case trainer.TrainingRuntimeKind, trainer.ClusterTrainingRuntimeKind, trainer.TrainJobKind:
		case "":
			return document{}, fmt.Errorf("a document without a kind among %d documents:\n%s", len(docs), d.text)
		default:
			return document{}, fmt.Errorf("unexpected kind %q: want %s, %s or %s", d.kind,
				trainer.TrainingRuntimeKind, trainer.ClusterTrainingRuntimeKind, trainer.TrainJobKind)
		}
		if slices.Contains(kinds, d.kind) {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return document{}, fmt.Errorf("the fixture has %d %s documents (kind %s), want 1: a fixture holds a runtime and a TrainJob, separated by a line ---",
			len(found), what, strings.Join(kinds, " or "))
	}
	return found[0], nil
}

func decode(text string, obj any) error {
	if err := yaml.UnmarshalStrict([]byte(text), obj); err != nil {
		return fmt.Errorf("decoding %T: %w\n%s", obj, err, text)
	}
	return nil
}
