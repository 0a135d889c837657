package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
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
	// jobOrder is the order the view shows the jobs of examples/jobs and
	// examples/realjobs in.
	jobOrder = []string{realJobName, elasticJobName, "torch-gpu", "mpi-pi", "jax-cpu", "torch-restart", "gang-gpu"}
)

// The real job of examples/realjobs: a PyTorch DDP script that the process
// nodes run as real processes, from a ConfigMap of the scripts.
var (
	realRuntime    = "examples/realjobs/torch-ddp-runtime.yaml"
	realJob        = "examples/realjobs/torch-ddp.yaml"
	realJobScripts = []string{"examples/realjobs/train_ddp.py", "examples/progress/report_progress.py"}
)

const (
	realJobName = "torch-ddp"
	// realJobConfigMap is the ConfigMap of the scripts, which the runtime
	// mounts at /workspace.
	realJobConfigMap = "train-scripts"
	// installRealJobPackages is the one command that gives the machine what
	// the real job runs on.
	installRealJobPackages = "sudo apt-get install python3-torch python3-xgboost"
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

// hasTorch reports whether Debian's python3-torch is there for the
// interpreter the process nodes run (/usr/bin/python3, as an image's
// would be), and if not, why.
func hasTorch(ctx context.Context) (bool, string) {
	out, err := exec.CommandContext(ctx, "/usr/bin/python3", "-c", "import torch").CombinedOutput()
	if err != nil {
		return false, strings.TrimSpace(lastLine(string(out)))
	}
	return true, ""
}

// applyRealJob creates the ConfigMap of the real job's scripts and applies
// its runtime and TrainJob. Without python3-torch it applies nothing and
// returns what the view should say instead: the command that installs it.
func applyRealJob(ctx context.Context, c *simcluster.Cluster, repo string, step *steps) (note string, err error) {
	if len(c.ProcessNodes) == 0 {
		note = "the real PyTorch job (examples/realjobs) runs on process nodes, and " + cmp.Or(c.NoProcessNodes, "this cluster has none")
		step.detail(note)
		return note, nil
	}
	if ok, why := hasTorch(ctx); !ok {
		note = fmt.Sprintf("the real PyTorch job (examples/realjobs) needs Debian's python3-torch (%s); install it with `%s` and run make demo again", why, installRealJobPackages)
		step.detail(note)
		return note, nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: demoNamespace, Name: realJobConfigMap}, Data: map[string]string{}}
	for _, f := range realJobScripts {
		data, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			return "", err
		}
		cm.Data[filepath.Base(f)] = string(data)
	}
	if err := c.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating ConfigMap %s/%s of the real job's scripts: %w", demoNamespace, realJobConfigMap, err)
	}
	if _, err := simcluster.ApplyFiles(ctx, c.Client, demoNamespace, filepath.Join(repo, realRuntime), filepath.Join(repo, realJob)); err != nil {
		return "", err
	}
	step.detail(fmt.Sprintf("the real PyTorch DDP job: %s, %s and ConfigMap %s (%s), on the process nodes",
		filepath.Base(realRuntime), filepath.Base(realJob), realJobConfigMap, strings.Join(baseNames(realJobScripts), ", ")))
	return "", nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
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

// reached reports whether the demo's TrainJob name has one of conditions
// True; false while it cannot be read (not created yet).
func reached(ctx context.Context, c client.Client, name string, conditions ...string) bool {
	job := &trainer.TrainJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: name}, job); err != nil {
		return false
	}
	for _, t := range conditions {
		if meta.IsStatusConditionTrue(job.Status.Conditions, t) {
			return true
		}
	}
	return false
}

// step applies the gang example if it is time; it returns an error only
// when the apply fails.
func (g *gangApplier) step(ctx context.Context) error {
	if g.applied {
		return nil
	}
	if !reached(ctx, g.c.Client, gangWaitsFor, trainer.TrainJobRunning, trainer.TrainJobComplete) {
		return nil
	}
	if _, err := simcluster.ApplyFiles(ctx, g.c.Client, demoNamespace, g.file); err != nil {
		return err
	}
	g.applied = true
	return nil
}
