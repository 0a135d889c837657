// Command demo is `make demo`: it brings up a simulated Kubernetes cluster
// (hack/simcluster) with Trainforge's controller, applies the example
// runtimes and TrainJobs of examples/, and shows them run to completion,
// live, until Ctrl-C. It needs only Go: the cluster's binaries are built
// from the Go module proxy on the first run (hack/cluster-binaries.sh) and
// cached.
//
// On Ctrl-C (or SIGTERM) it stops every process it started and removes its
// work directory; if it dies without that chance, a watchdog process does
// it. A second run while one runs says so and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// clusterName is the kwok cluster of the demo.
const clusterName = "trainforge-demo"

func main() {
	refresh := flag.Duration("refresh", time.Second, "how often the view is redrawn")
	plain := flag.Bool("plain", false, "print the view as plain text when it changed, at most every -plain-every, instead of redrawing it (the default when stdout is not a terminal)")
	plainEvery := flag.Duration("plain-every", 5*time.Second, "how often at most the plain view is printed")
	flag.Parse()

	// The demo's own output is its view: the libraries' logs (retries,
	// API warnings) would be noise in it, and controller-runtime complains
	// on the terminal when it has no logger at all.
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Stdout, viewOptions{refresh: *refresh, plain: *plain || !isTerminal(os.Stdout), plainEvery: *plainEvery})
	var locked *simcluster.ErrLocked
	switch {
	case errors.As(err, &locked):
		fmt.Fprintf(os.Stderr, "A demo is already running (%s).\nUse that one, or stop it with Ctrl-C in its terminal and run make demo again.\n", locked.Holder)
		os.Exit(1)
	case err != nil && ctx.Err() == nil:
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, vo viewOptions) error {
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	holder := fmt.Sprintf("pid %d, started at %s", os.Getpid(), time.Now().Format("15:04:05"))
	lock, err := simcluster.TryLock(clusterName, holder)
	if err != nil {
		return err
	}
	defer lock.Release()

	step := newSteps(out, 5)
	step.start("the cluster's binaries: etcd, kube-apiserver, kube-controller-manager, the Coscheduling scheduler, kwok, the JobSet controller")
	binaries, err := clusterBinaries(ctx, repo)
	if err != nil {
		return err
	}
	step.done("cached in " + binaries)

	dir, err := os.MkdirTemp("", "trainforge-demo-")
	if err != nil {
		return err
	}
	step.start("starting the simulated cluster in " + dir)
	cluster, err := simcluster.Start(ctx, simcluster.Options{
		Name: clusterName, RepoRoot: repo, Binaries: binaries, Dir: dir,
		ProcessNodes:     elasticProcessNodes,
		ProcessNodeHosts: statusEndpointHosts(),
		Progress:         func(s string) { step.detail(s) },
	})
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	defer func() {
		fmt.Fprintln(out, "\nStopping Trainforge's controller, the JobSet controller and the cluster...")
		cluster.Stop()
		fmt.Fprintf(out, "Stopped them all and removed %s.\n", dir)
	}()
	lock.Update(holder + "; its cluster: export KUBECONFIG=" + cluster.Kubeconfig)
	step.done("")

	step.start("building Trainforge's controller and its plugins: " + pluginModes() + " (about two minutes the first time)")
	bin := filepath.Join(dir, "bin")
	if err := simcluster.BuildTrainforge(ctx, repo, bin); err != nil {
		return err
	}
	step.done("")

	step.start("starting Trainforge's controller: webhooks and the status endpoint on; plugins " + pluginModes() + " (the first run compiles the wasm module, about 30 s; later runs take its code from the cache)")
	tf, err := cluster.StartTrainforge(ctx, bin)
	if err != nil {
		return err
	}
	step.done("configuration: " + tf.ConfigFile)

	step.start("applying the examples")
	if err := applyExamples(ctx, cluster, repo, step); err != nil {
		return err
	}
	if vo.realJobNote, err = applyRealJob(ctx, cluster, repo, step); err != nil {
		return err
	}
	if vo.realJobNote == "" {
		vo.elastic = &elasticDemo{c: cluster, repo: repo}
		step.detail(fmt.Sprintf("the elastic job %s (%s, %s) comes once %s has finished, to ride out a preemption, a lost node and a resize while it trains",
			elasticJobName, filepath.Base(elasticRuntime), filepath.Base(elasticJob), realJobName))
	}
	step.done("")

	vo.progress = &progressReporter{}
	go vo.progress.run(ctx, cluster, tf.StatusAddr)

	fmt.Fprintf(out, "\nExplore the cluster with kubectl in another terminal:\n\n    export KUBECONFIG=%s\n\nLogs: %s and %s\n", cluster.Kubeconfig, cluster.Logs, cluster.KwokLogs)
	return watch(ctx, out, cluster, repo, vo)
}

// pluginModes says which plugins run how, as "in process: PlainML, ... ·
// process: MPI, ... · wasm: JAX".
func pluginModes() string {
	byHow := map[string][]string{}
	for _, p := range simcluster.Plugins {
		byHow[p.How()] = append(byHow[p.How()], p.Name)
	}
	var parts []string
	for _, how := range []string{"in process", "process", "wasm"} {
		if names := byHow[how]; len(names) > 0 {
			parts = append(parts, how+": "+strings.Join(names, ", "))
		}
	}
	return strings.Join(parts, " · ")
}

// statusEndpointHosts lets the real job's training loop reach the
// controller's status endpoint by the name its KUBEFLOW_TRAINER_SERVER_URL
// gives, the controller's Service: the simulated cluster has no Service
// network, and the endpoint listens on this machine.
func statusEndpointHosts() []corev1.HostAlias {
	return []corev1.HostAlias{{IP: "127.0.0.1", Hostnames: []string{
		configv1alpha1.DefaultWebhookServiceName + "." + simcluster.TrainforgeNamespace + ".svc",
	}}}
}

// clusterBinaries runs hack/cluster-binaries.sh, whose progress goes to
// the terminal, and returns the directory it prints.
func clusterBinaries(ctx context.Context, repo string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "hack", "cluster-binaries.sh"))
	cmd.Dir = repo
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/cluster-binaries.sh: %w (its output above says why)", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// repoRoot is the repository around the working directory: make runs the
// demo from there.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/trainforge/trainforge\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not inside the Trainforge repository: run make demo from its clone", dir)
		}
	}
}

// steps prints the numbered steps of the start-up.
type steps struct {
	out   io.Writer
	n, of int
	began time.Time
}

func newSteps(out io.Writer, of int) *steps { return &steps{out: out, of: of} }

func (s *steps) start(what string) {
	s.n++
	s.began = time.Now()
	fmt.Fprintf(s.out, "[%d/%d] %s\n", s.n, s.of, what)
}

func (s *steps) detail(what string) { fmt.Fprintf(s.out, "      %s\n", what) }

func (s *steps) done(note string) {
	took := time.Since(s.began).Round(100 * time.Millisecond)
	if note != "" {
		note = "; " + note
	}
	fmt.Fprintf(s.out, "      done in %s%s\n", took, note)
}
