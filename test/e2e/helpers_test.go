package e2e

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// Pod annotations of the simulated cluster's stages (hack/simcluster/stages.yaml).
const (
	runForAnnotation           = "sim.trainforge.dev/run-for"
	failAfterAnnotation        = "sim.trainforge.dev/fail-after"
	exitCodeAnnotation         = "sim.trainforge.dev/exit-code"
	evictAfterAnnotation       = "sim.trainforge.dev/evict-after"
	firstAttemptOnlyAnnotation = "sim.trainforge.dev/first-attempt-only"
)

// newNamespace creates a namespace for one spec; deleting it at the end
// deletes what the spec made.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx, ns))).To(Succeed()) })
	return ns.Name
}

// torchRuntime is a TrainingRuntime like Kubeflow's torch-distributed:
// one trainer replicatedJob "node" whose pods run as annotations says on
// the simulated cluster, with gang scheduling when gang is set.
type torchRuntime struct {
	gang          bool
	annotations   map[string]string
	backoffLimit  *int32
	restartPolicy *trainer.RestartPolicy
	elastic       *trainer.TorchElasticPolicy
}

func (o torchRuntime) create(ns, name string) {
	GinkgoHelper()
	rt := &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
		},
	}
	if o.gang {
		rt.Spec.PodGroupPolicy = &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{
			Coscheduling: &trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](300)},
		}}
	}
	rt.Spec.RestartPolicy = o.restartPolicy
	rt.Spec.MLPolicy.Torch.ElasticPolicy = o.elastic
	node := jobsetv1alpha2.ReplicatedJob{Name: "node", Replicas: 1}
	node.Template.Labels = map[string]string{trainer.AncestorStepLabel: trainer.TrainerStep}
	node.Template.Spec.BackoffLimit = o.backoffLimit
	node.Template.Spec.Template.Annotations = o.annotations
	node.Template.Spec.Template.Spec = corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "node", Image: "pytorch/pytorch", Command: []string{"torchrun", "train.py"}}},
	}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{node}
	Expect(k8s.Create(ctx, rt)).To(Succeed())
}

// trainJob creates a TrainJob of a TrainingRuntime with numNodes nodes of
// gpus GPUs each (none when 0).
func trainJob(ns, name, runtime string, numNodes int32, gpus int64) *trainer.TrainJob {
	GinkgoHelper()
	job := newTrainJob(ns, name, runtime, numNodes, gpus)
	Expect(k8s.Create(ctx, job)).To(Succeed())
	return job
}

// newTrainJob is the TrainJob trainJob creates, not created yet.
func newTrainJob(ns, name, runtime string, numNodes int32, gpus int64) *trainer.TrainJob {
	job := &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: runtime, Kind: ptr.To(trainer.TrainingRuntimeKind)},
			Trainer:    &trainer.Trainer{NumNodes: ptr.To(numNodes)},
		},
	}
	if gpus > 0 {
		job.Spec.Trainer.ResourcesPerNode = &corev1.ResourceRequirements{Limits: corev1.ResourceList{
			simcluster.GPUResource: *resource.NewQuantity(gpus, resource.DecimalSI),
		}}
	}
	return job
}

func getTrainJob(g Gomega, ns, name string) *trainer.TrainJob {
	job := &trainer.TrainJob{}
	g.Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job)).To(Succeed())
	return job
}

// state is the TrainJob's State column: the type of its last condition.
func state(job *trainer.TrainJob) string {
	if n := len(job.Status.Conditions); n > 0 {
		return job.Status.Conditions[n-1].Type
	}
	return ""
}

// conditions describes a TrainJob's conditions, for failure messages.
func conditions(job *trainer.TrainJob) string {
	var out []string
	for _, c := range job.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(out, "; ")
}

// expectState waits until a TrainJob's State column reads want and its
// Running condition has runningReason.
func expectState(ns, name, want, runningReason string) *trainer.TrainJob {
	GinkgoHelper()
	var job *trainer.TrainJob
	Eventually(func(g Gomega) {
		job = getTrainJob(g, ns, name)
		g.Expect(state(job)).To(Equal(want), "conditions: %s", conditions(job))
		running := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobRunning)
		g.Expect(running).NotTo(BeNil())
		g.Expect(running.Reason).To(Equal(runningReason), "conditions: %s", conditions(job))
	}).Should(Succeed())
	return job
}

// podsOf lists the pods of a TrainJob's JobSet.
func podsOf(g Gomega, ns, name string) []corev1.Pod {
	list := &corev1.PodList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: name})).To(Succeed())
	return list.Items
}

func phases(pods []corev1.Pod) []corev1.PodPhase {
	out := make([]corev1.PodPhase, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Status.Phase)
	}
	return out
}

// jobCounts counts a JobSet's Jobs of one replicatedJob as JobSet does:
// succeeded and failed by their finished condition; the others active.
func jobCounts(g Gomega, ns, jobSet, replicatedJob string) (active, succeeded, failed int32) {
	list := &batchv1.JobList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{
		jobsetv1alpha2.JobSetNameKey: jobSet, jobsetv1alpha2.ReplicatedJobNameKey: replicatedJob,
	})).To(Succeed())
	for _, j := range list.Items {
		switch {
		case jobCondition(&j, batchv1.JobComplete):
			succeeded++
		case jobCondition(&j, batchv1.JobFailed):
			failed++
		case j.DeletionTimestamp == nil:
			active++
		}
	}
	return active, succeeded, failed
}

func jobCondition(j *batchv1.Job, typ batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// expectJobsStatusMatchesTheJobs waits until every replicatedJob of a
// TrainJob's jobsStatus counts what its Jobs are.
func expectJobsStatusMatchesTheJobs(ns, name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		job := getTrainJob(g, ns, name)
		g.Expect(job.Status.JobsStatus).NotTo(BeEmpty())
		for _, js := range job.Status.JobsStatus {
			active, succeeded, failed := jobCounts(g, ns, name, js.Name)
			g.Expect([]int32{ptr.Deref(js.Active, 0), ptr.Deref(js.Succeeded, 0), ptr.Deref(js.Failed, 0)}).To(
				Equal([]int32{active, succeeded, failed}),
				"%s/%s jobsStatus %s: active, succeeded, failed", ns, name, js.Name)
		}
	}).Should(Succeed())
}

func envOf(pod *corev1.Pod, container string) map[string]string {
	out := map[string]string{}
	for _, c := range pod.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, e := range c.Env {
			out[e.Name] = e.Value
		}
	}
	return out
}
