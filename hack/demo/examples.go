package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// The examples the demo applies, relative to the repository. The seed
// files each hold a runtime and a TrainJob "first-job" or "gang-job", so
// each goes to a namespace of its own, named as the file.
var (
	exampleRuntimes = []string{
		"examples/runtimes/torch-distributed.yaml",
		"examples/runtimes/torch-distributed-gang.yaml",
		"examples/runtimes/mpi-distributed.yaml",
		"examples/runtimes/jax-distributed.yaml",
		"examples/runtimes/torch-distributed-restart.yaml",
	}
	exampleJobs = []string{
		"examples/jobs/torch-gpu.yaml",
		"examples/jobs/mpi.yaml",
		"examples/jobs/jax.yaml",
		"examples/jobs/torch-restart.yaml",
	}
	seedExamples = []string{
		"examples/seed/seed-plainml.yaml",
		"examples/seed/seed-torch.yaml",
		"examples/seed/seed-coscheduling.yaml",
	}
	// The gang job is applied once the torch job runs: then it holds 16 of
	// the 32 GPUs and the gang, which wants 24, visibly waits for them.
	gangExample  = "examples/jobs/gang-gpu.yaml"
	gangWaitsFor = "torch-gpu"
	// jobOrder is the order the view shows the jobs of examples/jobs in.
	jobOrder = []string{"torch-gpu", "mpi-pi", "jax-cpu", "torch-restart", "gang-gpu"}
)

// demoNamespace holds the TrainJobs of examples/jobs.
const demoNamespace = "default"

// applyExamples applies the runtimes, the jobs (all but the gang) and the
// seed examples.
func applyExamples(ctx context.Context, c *simcluster.Cluster, repo string, step *steps) error {
	abs := func(files []string) []string {
		out := make([]string, len(files))
		for i, f := range files {
			out[i] = filepath.Join(repo, f)
		}
		return out
	}
	if _, err := simcluster.ApplyFiles(ctx, c.Client, "", abs(exampleRuntimes)...); err != nil {
		return err
	}
	step.detail("runtimes: " + strings.Join(baseNames(exampleRuntimes), ", "))
	if _, err := simcluster.ApplyFiles(ctx, c.Client, demoNamespace, abs(exampleJobs)...); err != nil {
		return err
	}
	step.detail("TrainJobs: " + strings.Join(baseNames(exampleJobs), ", ") + " (namespace " + demoNamespace + ")")
	for _, f := range seedExamples {
		ns := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if err := c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		if _, err := simcluster.ApplyFiles(ctx, c.Client, ns, filepath.Join(repo, f)); err != nil {
			return err
		}
	}
	step.detail("the seed examples, each in the namespace of its name: " + strings.Join(baseNames(seedExamples), ", "))
	step.detail(fmt.Sprintf("%s comes once %s runs", filepath.Base(gangExample), gangWaitsFor))
	return nil
}

func baseNames(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Base(f)
	}
	return out
}

// gangApplier applies the gang example once the job it waits for runs.
type gangApplier struct {
	c       *simcluster.Cluster
	file    string
	applied bool
}

// step applies the gang example if it is time; it returns an error only
// when the apply fails.
func (g *gangApplier) step(ctx context.Context) error {
	if g.applied {
		return nil
	}
	job := &trainer.TrainJob{}
	if err := g.c.Client.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: gangWaitsFor}, job); err != nil {
		return nil
	}
	if !meta.IsStatusConditionTrue(job.Status.Conditions, trainer.TrainJobRunning) &&
		!meta.IsStatusConditionTrue(job.Status.Conditions, trainer.TrainJobComplete) {
		return nil
	}
	if _, err := simcluster.ApplyFiles(ctx, g.c.Client, demoNamespace, g.file); err != nil {
		return err
	}
	g.applied = true
	return nil
}
