package main

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
	"github.com/trainforge/trainforge/hack/simcluster/procnode"
	"github.com/trainforge/trainforge/hack/steplog"
)

// snapshot is what one frame of the view shows, read from the cluster.
type snapshot struct {
	at                  time.Time
	nodes, readyNodes   int
	gpusUsed, gpusTotal int64
	// processNodes are the nodes whose pods run as real processes.
	processNodes map[string]bool
	jobs         []jobView
}

// jobView is one TrainJob as the view shows it.
type jobView struct {
	namespace, name, runtime string
	created                  time.Time
	// state is the State column: the last condition's type.
	state string
	// why explains a Failed or Created=False state.
	why        string
	plugins    string
	objects    []string
	pods       []corev1.Pod
	jobsStatus []trainer.JobStatus
	env        []string
	podGroup   *schedulingv1alpha1.PodGroup
	restarts   *trainer.RestartStatus
	// progress is what the training code last reported.
	progress *trainer.TrainerStatus
	// goodput is its goodput account, nil until it reports progress.
	goodput *trainer.GoodputStatus
	// nodes is the size of an elastic job.
	nodes *trainer.NodesStatus
	// stepLog is the elastic job's own record of its steps
	// (train_ddp.py --step-log), nil for other jobs and until it starts.
	stepLog []steplog.Run
}

// envPrefixes are the variables the ML plugins set, which the view shows
// for the jobs of examples/jobs.
var envPrefixes = []string{"PET_", "JAX_", "OMPI_", "DMLC_"}

func takeSnapshot(ctx context.Context, c client.Client) (*snapshot, error) {
	s := &snapshot{at: time.Now()}
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return nil, err
	}
	s.processNodes = map[string]bool{}
	for _, n := range nodes.Items {
		s.nodes++
		if n.Labels[procnode.NodeLabel] == "true" {
			s.processNodes[n.Name] = true
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				s.readyNodes++
			}
		}
		if q, ok := n.Status.Allocatable[simcluster.GPUResource]; ok {
			s.gpusTotal += q.Value()
		}
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods); err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			s.gpusUsed += gpus(&p)
		}
	}
	jobs := &trainer.TrainJobList{}
	if err := c.List(ctx, jobs); err != nil {
		return nil, err
	}
	// The demo's own jobs first, in the order of examples/jobs, then any
	// other job by age, then the seed examples.
	rank := func(j *trainer.TrainJob) int {
		if j.Namespace != demoNamespace {
			return len(jobOrder) + 1
		}
		if i := slices.Index(jobOrder, j.Name); i >= 0 {
			return i
		}
		return len(jobOrder)
	}
	slices.SortStableFunc(jobs.Items, func(a, b trainer.TrainJob) int {
		return cmp.Or(
			cmp.Compare(rank(&a), rank(&b)),
			strings.Compare(a.Namespace, b.Namespace),
			a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
			strings.Compare(a.Name, b.Name))
	})
	for i := range jobs.Items {
		v, err := viewOf(ctx, c, &jobs.Items[i], pods.Items)
		if err != nil {
			return nil, err
		}
		s.jobs = append(s.jobs, v)
	}
	return s, nil
}

func gpus(p *corev1.Pod) int64 {
	var n int64
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Requests[simcluster.GPUResource]; ok {
			n += q.Value()
		}
	}
	return n
}

func viewOf(ctx context.Context, c client.Client, job *trainer.TrainJob, pods []corev1.Pod) (jobView, error) {
	v := jobView{
		namespace: job.Namespace, name: job.Name, runtime: job.Spec.RuntimeRef.Name,
		created: job.CreationTimestamp.Time, state: "-", jobsStatus: job.Status.JobsStatus,
		restarts: job.Status.Restarts,
		progress: job.Status.TrainerStatus,
		goodput:  job.Status.Goodput,
		nodes:    job.Status.Nodes,
	}
	if n := len(job.Status.Conditions); n > 0 {
		last := job.Status.Conditions[n-1]
		v.state = last.Type
		if (last.Type == trainer.TrainJobFailed) || (last.Type == trainer.TrainJobCreated && last.Status != "True") {
			v.why = last.Reason + ": " + last.Message
		}
	}
	if created := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobCreated); created != nil && created.Status == "True" {
		objects, plugins, _ := strings.Cut(strings.TrimPrefix(created.Message, "Created "), "; plugins: ")
		v.objects = strings.Split(objects, ", ")
		v.plugins = plugins
	}
	for _, p := range pods {
		if p.Namespace == job.Namespace && p.Labels[jobsetv1alpha2.JobSetNameKey] == job.Name {
			v.pods = append(v.pods, p)
		}
	}
	slices.SortFunc(v.pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	if job.Namespace == demoNamespace {
		env, err := trainerEnv(ctx, c, job)
		if err != nil {
			return v, err
		}
		v.env = env
	}
	if job.Namespace == demoNamespace && job.Name == elasticJobName &&
		job.Status.Goodput != nil && job.Status.Goodput.State == trainer.GoodputFinished {
		// The view sets the log beside a closed account only: read it
		// then, not each frame while the script may be writing a line.
		if runs, err := steplog.Read(elasticStepLog(job.UID)); err == nil {
			v.stepLog = runs
		}
	}
	if slices.ContainsFunc(v.objects, func(o string) bool { return strings.HasPrefix(o, "PodGroup ") }) {
		pg := &schedulingv1alpha1.PodGroup{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: job.Name}, pg); err == nil {
			v.podGroup = pg
		}
	}
	return v, nil
}

// trainerEnv lists the plugins' variables of the trainer container of the
// job's JobSet, and the user's, as NAME=value.
func trainerEnv(ctx context.Context, c client.Client, job *trainer.TrainJob) ([]string, error) {
	js := &jobsetv1alpha2.JobSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: job.Name}, js); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	var user []string
	if job.Spec.Trainer != nil {
		for _, e := range job.Spec.Trainer.Env {
			user = append(user, e.Name)
		}
	}
	var out []string
	for _, rj := range js.Spec.ReplicatedJobs {
		if rj.Template.Labels[trainer.AncestorStepLabel] != trainer.TrainerStep {
			continue
		}
		for _, ctr := range rj.Template.Spec.Template.Spec.Containers {
			if ctr.Name != trainer.TrainerContainerName {
				continue
			}
			for _, e := range ctr.Env {
				known := slices.ContainsFunc(envPrefixes, func(p string) bool { return strings.HasPrefix(e.Name, p) })
				if !known && !slices.Contains(user, e.Name) {
					continue
				}
				value := envValue(e)
				if strings.ContainsAny(value, " \t") {
					value = strconv.Quote(value)
				}
				out = append(out, e.Name+"="+value)
			}
		}
	}
	return out, nil
}

func envValue(e corev1.EnvVar) string {
	switch {
	case e.ValueFrom == nil:
		return e.Value
	case e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index"):
		return "<completion-index>"
	case e.ValueFrom.FieldRef != nil:
		return "<" + e.ValueFrom.FieldRef.FieldPath + ">"
	default:
		return "<from a reference>"
	}
}

// maxNodes is how many nodes a pod summary names.
const maxNodes = 4

// podSummary counts pods by what they are doing: "2 Running", "3 Pending
// (unscheduled)", and names the nodes of the running ones.
func podSummary(pods []corev1.Pod) (string, []string) {
	counts := map[string]int{}
	var order []string
	var nodes []string
	for _, p := range pods {
		what := string(p.Status.Phase)
		switch {
		case p.DeletionTimestamp != nil:
			what = "Terminating"
		case p.Status.Phase == corev1.PodPending && p.Spec.NodeName == "":
			what = "Pending (unscheduled)"
		case p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "":
			if !slices.Contains(nodes, p.Spec.NodeName) {
				nodes = append(nodes, p.Spec.NodeName)
			}
		}
		if counts[what] == 0 {
			order = append(order, what)
		}
		counts[what]++
	}
	parts := make([]string, 0, len(order))
	for _, what := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[what], what))
	}
	if len(nodes) > maxNodes {
		nodes = append(nodes[:maxNodes], fmt.Sprintf("%d more", len(nodes)-maxNodes))
	}
	return strings.Join(parts, ", "), nodes
}

// countUnscheduled counts the pods waiting for a node.
func countUnscheduled(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodPending {
			n++
		}
	}
	return n
}

// schedulerSays is why the scheduler left the pods unscheduled, in the
// first sentence of its message (the rest is about preemption), if it
// said. A pod tried before its siblings existed says so until it is tried
// again, which may be a while: another pod's more telling message wins.
func schedulerSays(pods []corev1.Pod) string {
	var found string
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Message == "" {
				continue
			}
			msg, _, _ := strings.Cut(c.Message, ". ")
			msg = goQuantity.ReplaceAllString(msg, "$2 $1")
			if !strings.Contains(msg, "enough sibling pods") {
				return msg
			}
			if found == "" {
				found = msg
			}
		}
	}
	return found
}

// goQuantity matches a resource list as Coscheduling prints it, with Go's
// %v of resource.Quantity: map[nvidia.com/gpu:{{8 0} {<nil>}  DecimalSI}].
var goQuantity = regexp.MustCompile(`map\[([^:\]]+):\{\{(\d+) 0\} \{<nil>\} +\w*\}\]`)

func quantity(list corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := list[name]
	if !ok {
		return "0"
	}
	return q.String()
}
