package jobset

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// load decodes a runtime (ClusterTrainingRuntime or TrainingRuntime) and a
// TrainJob from YAML documents separated by "---", as the seed examples
// are written.
func load(t *testing.T, docs ...string) (*trainer.TrainJob, *trainer.TrainingRuntimeSpec) {
	t.Helper()
	var job *trainer.TrainJob
	var spec *trainer.TrainingRuntimeSpec
	for _, d := range docs {
		for _, doc := range strings.Split(d, "\n---\n") {
			var tm struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("decoding kind: %v", err)
			}
			switch tm.Kind {
			case trainer.TrainJobKind:
				job = &trainer.TrainJob{}
				mustUnmarshal(t, doc, job)
			case trainer.ClusterTrainingRuntimeKind:
				rt := &trainer.ClusterTrainingRuntime{}
				mustUnmarshal(t, doc, rt)
				spec = &rt.Spec
			case trainer.TrainingRuntimeKind:
				rt := &trainer.TrainingRuntime{}
				mustUnmarshal(t, doc, rt)
				spec = &rt.Spec
			default:
				t.Fatalf("unexpected kind %q", tm.Kind)
			}
		}
	}
	if job == nil || spec == nil {
		t.Fatal("the fixture needs a runtime and a TrainJob")
	}
	return job, spec
}

func mustUnmarshal(t *testing.T, doc string, obj any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		t.Fatalf("decoding %T: %v\n%s", obj, err, doc)
	}
}

// newInfo builds Info the way the runner does before the Build phase:
// framework.NewInfo, then the ML/gang plugins (simulated by enforce), then
// the derived values.
func newInfo(t *testing.T, job *trainer.TrainJob, spec *trainer.TrainingRuntimeSpec, enforce func(*framework.Info)) *framework.Info {
	t.Helper()
	info, err := framework.NewInfo(job, spec)
	if err != nil {
		t.Fatalf("NewInfo: %v", err)
	}
	if enforce != nil {
		enforce(info)
		if err := framework.RefreshDerived(info, job.Name); err != nil {
			t.Fatalf("RefreshDerived: %v", err)
		}
	}
	return info
}

// jsonMap normalises any JSON-shaped value (a typed object, an unstructured
// map, or YAML text) into map[string]any, so that go-cmp compares content
// and not representation.
func jsonMap(t *testing.T, v any) map[string]any {
	t.Helper()
	var raw []byte
	var err error
	if s, ok := v.(string); ok {
		raw, err = yaml.YAMLToJSON([]byte(s))
	} else {
		raw, err = json.Marshal(v)
	}
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
