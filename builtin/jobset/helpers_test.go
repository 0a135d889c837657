package jobset

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// load returns the runtime and the TrainJob of seed, a seed example of
// frameworktest, its TrainJob in namespace "default"; runtime and job, YAML,
// replace them when set.
func load(t *testing.T, seed, runtime, job string) (*trainer.TrainingRuntimeSpec, *trainer.TrainJob) {
	t.Helper()
	var spec *trainer.TrainingRuntimeSpec
	var tj *trainer.TrainJob
	if seed != "" {
		spec, tj = frameworktest.Seed(t, seed)
		tj.Namespace = "default"
	}
	if runtime != "" {
		spec = frameworktest.Runtime(t, runtime)
	}
	if job != "" {
		tj = frameworktest.TrainJob(t, job)
	}
	if spec == nil || tj == nil {
		t.Fatal("the case needs a runtime and a TrainJob")
	}
	return spec, tj
}

// newInfo builds Info the way the runner does before the Build phase:
// framework.NewInfo, then the ML/gang plugins (simulated by enforce), then
// the derived values.
func newInfo(t *testing.T, job *trainer.TrainJob, spec *trainer.TrainingRuntimeSpec, enforce func(*framework.Info)) *framework.Info {
	t.Helper()
	info := frameworktest.NewInfo(t, job, spec)
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
