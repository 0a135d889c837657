package simcluster

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster/procnode"
	"github.com/trainforge/trainforge/internal/logtail"
)

//go:embed stages.yaml
var stagesYAML []byte

//go:embed scheduler.yaml
var schedulerYAML []byte

// BinariesEnv names the variable that gives the directory of the
// cluster's binaries (what hack/cluster-binaries.sh prints).
const BinariesEnv = "TRAINFORGE_CLUSTER_BINARIES"

// Options say what cluster to start.
type Options struct {
	// Name of the cluster, as kwokctl knows it.
	Name string
	// RepoRoot is the root of the Trainforge repository: its CRDs, webhook
	// manifests and commands come from there.
	RepoRoot string
	// Binaries is the directory hack/cluster-binaries.sh prints.
	Binaries string
	// Dir is the work directory: kwok's files, certificates, logs,
	// kubeconfig. Stop removes it.
	Dir string
	// Nodes are the fake nodes; DefaultNodes when empty.
	Nodes []NodePool
	// ProcessNodes is how many process nodes (nodes whose pods run as
	// processes of this machine, package procnode) the cluster has:
	// DefaultProcessNodes when 0, none when negative.
	ProcessNodes int
	// ProcessNodeHosts are entries of the /etc/hosts of every pod of the
	// process nodes.
	ProcessNodeHosts []corev1.HostAlias
	// Kueue, when set, runs the Kueue manager from the start (Cluster.Kueue;
	// see StartKueue, which starts it later).
	Kueue bool
	// Progress, when set, is told of each step, in a few words.
	Progress func(step string)
}

// Cluster is a running simulated cluster.
type Cluster struct {
	opts Options
	// Kubeconfig is the path of the cluster's kubeconfig (admin).
	Kubeconfig string
	// Config and Client reach the cluster as admin.
	Config *rest.Config
	Client client.Client
	// Logs is the directory of the logs of the processes the package
	// starts; KwokLogs that of the components kwokctl starts.
	Logs, KwokLogs string
	// ProcessNodes are the names of the process nodes, Agent plays their
	// kubelets.
	ProcessNodes []string
	Agent        *procnode.Agent
	// NoProcessNodes, when set, says why the cluster has no process nodes
	// although Options asked for them.
	NoProcessNodes string
	// Kueue is the Kueue manager Options.Kueue asked for, nil without.
	Kueue *Kueue

	kwokDir  string
	watchdog *watchdog
	procs    []*process
	procLog  *os.File
	stopped  bool
}

// Scheme has every kind the cluster serves that the package and its users
// read or write.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, trainer.AddToScheme,
		jobsetv1alpha2.AddToScheme, schedulingv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Start brings the cluster up: the kwok cluster, the CRDs of JobSet,
// PodGroup and Trainforge, the fake nodes, and the JobSet controller with
// its webhooks. On error, what was started is stopped again.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Binaries == "" {
		return nil, fmt.Errorf("no cluster binaries: set %s to the directory hack/cluster-binaries.sh prints", BinariesEnv)
	}
	for _, b := range []string{"kwokctl", "kwok", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "jobset-controller"} {
		if _, err := os.Stat(filepath.Join(opts.Binaries, b)); err != nil {
			return nil, fmt.Errorf("%s has no %s: run hack/cluster-binaries.sh and use the directory it prints", opts.Binaries, b)
		}
	}
	if len(opts.Nodes) == 0 {
		opts.Nodes = DefaultNodes
	}
	if opts.ProcessNodes == 0 {
		opts.ProcessNodes = DefaultProcessNodes
	}
	if opts.Progress == nil {
		opts.Progress = func(string) {}
	}
	c = &Cluster{
		opts:       opts,
		Kubeconfig: filepath.Join(opts.Dir, "kubeconfig"),
		Logs:       filepath.Join(opts.Dir, "logs"),
		kwokDir:    filepath.Join(opts.Dir, "kwok"),
	}
	c.KwokLogs = filepath.Join(c.kwokDir, "clusters", opts.Name, "logs")
	if err := os.MkdirAll(c.Logs, 0o755); err != nil {
		return nil, err
	}
	if c.watchdog, err = startWatchdog(c.bin("kwokctl"), opts.Name, c.kwokDir, opts.Dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Stop()
			c = nil
		}
	}()

	opts.Progress("etcd, kube-apiserver, kube-controller-manager, the Coscheduling scheduler and kwok")
	if err := c.createKwokCluster(ctx); err != nil {
		return c, err
	}
	if err := c.connect(ctx); err != nil {
		return c, err
	}
	opts.Progress("the CRDs of JobSet, PodGroup and Trainforge")
	if err := c.installCRDs(ctx); err != nil {
		return c, err
	}
	opts.Progress(fmt.Sprintf("%d fake nodes: %s", countNodes(opts.Nodes), describeNodes(opts.Nodes)))
	if err := c.createNodes(ctx); err != nil {
		return c, err
	}
	if opts.ProcessNodes > 0 {
		if err := procnode.CheckHost(); err != nil {
			// The fake nodes need neither root nor mount namespaces; what
			// needs process nodes says why there are none.
			c.NoProcessNodes = "the simulated cluster has no process nodes: " + err.Error()
			opts.Progress(c.NoProcessNodes)
		} else {
			opts.Progress(fmt.Sprintf("%d process nodes (%s CPU, %s each): their pods run as processes of this machine", opts.ProcessNodes, ProcessNodeCPU, ProcessNodeMemory))
			if err := c.startProcessNodes(ctx); err != nil {
				return c, err
			}
		}
	}
	opts.Progress("the JobSet controller and its webhooks")
	if err := c.startJobSet(ctx); err != nil {
		return c, err
	}
	if opts.Kueue {
		opts.Progress("the Kueue manager, its CRDs and its webhooks")
		if c.Kueue, err = c.StartKueue(ctx); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (c *Cluster) bin(name string) string { return filepath.Join(c.opts.Binaries, name) }

// createKwokCluster runs kwokctl with the binary runtime and the local
// binaries, the scheduler configuration and the stages.
func (c *Cluster) createKwokCluster(ctx context.Context) error {
	stages := filepath.Join(c.opts.Dir, "stages.yaml")
	scheduler := filepath.Join(c.opts.Dir, "scheduler.yaml")
	if err := os.WriteFile(stages, stagesYAML, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(scheduler, schedulerYAML, 0o644); err != nil {
		return err
	}
	args := []string{
		"--name", c.opts.Name, "--config", stages,
		"create", "cluster", "--runtime", "binary",
		"--etcd-binary", c.bin("etcd"),
		"--kube-apiserver-binary", c.bin("kube-apiserver"),
		"--kube-controller-manager-binary", c.bin("kube-controller-manager"),
		"--kube-scheduler-binary", c.bin("kube-scheduler"),
		"--kwok-controller-binary", c.bin("kwok"),
		"--kube-scheduler-config", scheduler,
		// The Coscheduling plugin asks to retry a gang only when a pod or a
		// PodGroup is added, not when pods that held its resources end: on
		// a quiet cluster the gang would wait the scheduler's 5 minutes
		// before it looks again.
		"--extra-args", "kube-scheduler=pod-max-in-unschedulable-pods-duration=10s",
		// kwok plays only the fake nodes (which carry this annotation),
		// not the process nodes, whose kubelet is package procnode's agent.
		"--extra-args", "kwok-controller=manage-all-nodes=false",
		"--extra-args", "kwok-controller=manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--kubeconfig", c.Kubeconfig,
		"--timeout", "2m",
	}
	return c.kwokctl(ctx, "creating the kwok cluster", args...)
}

// kwokctl runs kwokctl on the cluster's work directory, its output in the
// log directory; what says what it does, for the error.
func (c *Cluster) kwokctl(ctx context.Context, what string, args ...string) error {
	log, err := os.OpenFile(filepath.Join(c.Logs, "kwokctl.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, c.bin("kwokctl"), args...)
	// kwokctl would read and write ~/.kwok otherwise.
	cmd.Env = append(os.Environ(), "KWOK_WORKDIR="+c.kwokDir)
	// Its own output, kept for the error: a failed Start removes the work
	// directory, the log with it.
	var out bytes.Buffer
	w := io.MultiWriter(log, &out)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: kwokctl: %w; the end of its output (%s):\n%s", what, err, log.Name(), logtail.Text(out.String(), logtail.Lines))
	}
	return nil
}

// connect reads the kubeconfig and waits until the API server answers and
// the controller manager has made the default service account, without
// which no pod is admitted.
func (c *Cluster) connect(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the kubeconfig %s: %w", c.Kubeconfig, err)
	}
	// The demo's view and the suite poll many kinds.
	cfg.QPS, cfg.Burst = 100, 200
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	c.Config = cfg
	if c.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return fmt.Errorf("connecting to the cluster: %w", err)
	}
	return poll(ctx, time.Minute, "the default service account of the default namespace", func() error {
		return c.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
	})
}

// Stop stops every process the cluster started, the kwok cluster, and
// removes the work directory. It may be called more than once.
func (c *Cluster) Stop() {
	if c == nil || c.stopped {
		return
	}
	c.stopped = true
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	c.Agent.Stop()
	if c.procLog != nil {
		c.procLog.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = c.kwokctl(ctx, "deleting the kwok cluster", "--name", c.opts.Name, "delete", "cluster")
	_ = os.RemoveAll(c.opts.Dir)
	c.watchdog.done()
}

// Exited returns an error naming the first process of the cluster that
// has exited, with the end of its log, or nil while all run.
func (c *Cluster) Exited() error {
	for _, p := range c.procs {
		if done, err := p.exited(); done {
			return p.exitError(err)
		}
	}
	return nil
}

// track makes Stop and the watchdog stop a process.
func (c *Cluster) track(p *process) {
	c.procs = append(c.procs, p)
	c.watchdog.watch(p)
}

// poll calls fn every 200ms until it returns nil, or fails after timeout
// with fn's last error.
func poll(ctx context.Context, timeout time.Duration, what string, fn func() error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = fn()
		return last == nil, nil
	})
	if err != nil {
		if last == nil {
			last = err
		}
		return fmt.Errorf("waiting for %s: %w", what, last)
	}
	return nil
}
