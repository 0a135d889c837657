package builtin_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin/builtintest"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/runtime/runtimetest"
)

// FuzzPipeline runs what a reconcile runs for a TrainJob and its runtime,
// both decoded from arbitrary JSON: NewInfo, the Enforce phases and Build
// of the four built-ins, in the default order. The webhook targets stop
// at validation; this one reaches the controller's path, where a count
// becomes pods and pods become objects. It must never panic, and the
// objects it builds must encode.
func FuzzPipeline(f *testing.F) {
	jobs := builtintest.ExampleDocs(f, filepath.Join("..", "examples"), trainer.TrainJobKind)
	runtimes := builtintest.ExampleDocs(f, filepath.Join("..", "examples"), trainer.ClusterTrainingRuntimeKind, trainer.TrainingRuntimeKind)
	for i, job := range jobs {
		for _, rt := range runtimes[i%len(runtimes) : i%len(runtimes)+1] {
			f.Add(job, rt)
		}
	}
	torch := runtimes[0]
	for _, rt := range runtimes {
		if strings.Contains(string(rt), `"torch":`) {
			torch = rt
		}
	}
	// A count far beyond what a JobSet may run: refused, not allocated.
	f.Add([]byte(`{"metadata":{"name":"j","namespace":"ns"},"spec":{"runtimeRef":{"name":"rt"},"trainer":{"numNodes":2147483647}}}`), torch)
	f.Add([]byte(`{"metadata":{"name":"j","namespace":"ns"},"spec":{"runtimeRef":{"name":"rt"},"trainer":{"numProcPerNode":"gpu","resourcesPerNode":{"limits":{"nvidia.com/gpu":"1e9"}}}}}`), torch)
	fw := builtintest.Framework(f, builtintest.Pipeline...)
	f.Fuzz(func(t *testing.T, jobJSON, runtimeJSON []byte) {
		job := &trainer.TrainJob{}
		rt := &trainer.ClusterTrainingRuntime{}
		if json.Unmarshal(jobJSON, job) != nil || json.Unmarshal(runtimeJSON, rt) != nil {
			return
		}
		if job.Name == "" {
			job.Name = "job"
		}
		if job.Namespace == "" {
			job.Namespace = "ns"
		}
		ctx := context.Background()
		info, err := framework.NewInfo(job, &rt.Spec)
		if err != nil {
			return
		}
		objs, _, err := runtimetest.Build(ctx, fw.Current(), info, job)
		if err != nil {
			return
		}
		for _, o := range objs {
			if _, err := o.Object.MarshalJSON(); err != nil {
				t.Fatalf("a built %s does not encode: %v", o.Object.GetKind(), err)
			}
		}
	})
}
