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

// The demo reads the elastic job's step log where the runtime has rank 0
// write it: --step-log in the checkpoints volume, whose hostPath is
// elasticCheckpoints.
func TestElasticRuntimeWritesTheStepLogTheDemoReads(t *testing.T) {
	objs, err := simcluster.ReadManifests(filepath.Join("..", "..", elasticRuntime))
	if err != nil {
		t.Fatal(err)
	}
	var rt trainer.ClusterTrainingRuntime
	for _, u := range objs {
		if u.GetKind() == trainer.ClusterTrainingRuntimeKind {
			data, err := u.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(data, &rt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(rt.Spec.Template.Spec.ReplicatedJobs) == 0 {
		t.Fatalf("%s: no replicatedJobs", elasticRuntime)
	}
	pod := rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	hostPaths := map[string]string{}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
		}
	}
	for _, c := range pod.Containers {
		for _, m := range c.VolumeMounts {
			if hostPaths[m.Name] != elasticCheckpoints {
				continue
			}
			want := "--step-log=" + m.MountPath + "/$(PET_RDZV_ID)/steps.log"
			if !slices.Contains(c.Args, want) {
				t.Errorf("%s: container %s has args %q, want %s (elasticStepLog)", elasticRuntime, c.Name, c.Args, want)
			}
			return
		}
	}
	t.Errorf("%s: no container mounts a hostPath volume of %s", elasticRuntime, elasticCheckpoints)
}
