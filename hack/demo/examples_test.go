package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// Every example the demo applies exists and decodes strictly into its
// kind (the e2e suite runs them on the simulated cluster), the real job's
// scripts exist, and the view's order names the jobs of examples/jobs and
// examples/realjobs.
func TestExamples(t *testing.T) {
	repo := filepath.Join("..", "..")
	var jobs []string
	files := append(append(append([]string{}, exampleRuntimes...), exampleJobs...), seedExamples...)
	files = append(files, realRuntime, realJob, elasticRuntime, elasticJob)
	for _, f := range append(files, gangExample) {
		objs, err := simcluster.ReadManifests(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range objs {
			data, err := u.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var into any
			switch u.GetKind() {
			case trainer.ClusterTrainingRuntimeKind:
				into = &trainer.ClusterTrainingRuntime{}
			case trainer.TrainJobKind:
				into = &trainer.TrainJob{}
				if d := filepath.Dir(f); d == "examples/jobs" || d == "examples/realjobs" {
					jobs = append(jobs, u.GetName())
				}
			default:
				t.Errorf("%s: unexpected %s", f, u.GetKind())
				continue
			}
			if err := yaml.UnmarshalStrict(data, into); err != nil {
				t.Errorf("%s: %s %s: %v", f, u.GetKind(), u.GetName(), err)
			}
		}
	}
	slices.Sort(jobs)
	order := slices.Clone(jobOrder)
	slices.Sort(order)
	if !slices.Equal(jobs, order) {
		t.Errorf("jobOrder %v, want the jobs of examples/jobs and examples/realjobs %v", jobOrder, jobs)
	}
	for _, f := range realJobScripts {
		if _, err := os.Stat(filepath.Join(repo, f)); err != nil {
			t.Errorf("a script of the real job: %v", err)
		}
	}
	entries, err := os.ReadDir(filepath.Join(repo, "examples", "jobs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(exampleJobs)+1 {
		t.Errorf("examples/jobs has %d files, the demo applies %d", len(entries), len(exampleJobs)+1)
	}
}
