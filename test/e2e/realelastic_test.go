package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// The real elastic job: examples/realjobs' torch-elastic-cpu runtime, as
// shipped, on the process nodes. torchrun's c10d rendezvous must form
// from the Torch plugin's variables alone, re-form at each size the JobSet
// plugin resizes the trainer Job to, and train on from the checkpoint.
var _ = Describe("real training processes on the process nodes: an elastic DDP job", func() {
	var ns string
	var clientset *kubernetes.Clientset
	BeforeEach(func() { ns, clientset = prepareRealJobs() })

	It("goes 2 → 3 → 2 nodes by the scale subresource while it trains, its group re-formed at each size from the last checkpoint, rides out the kill of a node's processes without a JobSet restart, and completes", func() {
		objs, err := simcluster.ApplyFiles(ctx, k8s, "", filepath.Join(repoRoot, "examples", "realjobs", "torch-elastic-runtime.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(objs).To(HaveLen(1))
		rt := &trainer.ClusterTrainingRuntime{}
		Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, rt)).To(Succeed())
		checkpoints := hostPathOf(rt, "checkpoints")

		// The runtime's arguments, but training until the spec says
		// enough (the stop file) rather than for a number of steps.
		job := &trainer.TrainJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "elastic"},
			Spec: trainer.TrainJobSpec{
				RuntimeRef: trainer.RuntimeRef{Name: rt.Name},
				Trainer: &trainer.Trainer{NumNodes: ptr.To[int32](2), Args: []string{
					"--steps=1000000", "--min-step-seconds=0.1", "--report-every-seconds=1",
					"--checkpoint-every=" + strconv.Itoa(elasticCheckpointEvery),
					"--checkpoint-dir=/checkpoints/$(PET_RDZV_ID)", "--stop-file=/checkpoints/$(PET_RDZV_ID)/stop",
				}},
			},
		}
		Expect(k8s.Create(ctx, job)).To(Succeed())
		// The job's checkpoints, on this machine, as every node sees them.
		dir := filepath.Join(checkpoints, string(job.UID))
		DeferCleanup(os.RemoveAll, dir)
		w := &elasticWatch{clientset: clientset, ns: ns, name: job.Name}

		By("2 nodes: the group forms from the Torch plugin's variables and trains")
		w.expectTrainingAt(2)
		js := &jobsetv1alpha2.JobSet{}
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Name}, js)).To(Succeed())
		jobSetUID := js.UID

		By("scaled to 3: the new node joins and the group re-forms at world size 3")
		Expect(scaleTrainJob(ns, job.Name, 3)).To(Succeed())
		w.expectTrainingAt(3)

		By("scaled to 2: the highest index goes and the group re-forms at world size 2")
		Expect(scaleTrainJob(ns, job.Name, 2)).To(Succeed())
		w.expectTrainingAt(2)

		By("the kill of node 1's processes (not the rendezvous host's): its container restarts in place and the group re-forms")
		killed := w.pod("1")
		pid, err := strconv.Atoi(strings.TrimPrefix(killed.Status.ContainerStatuses[0].ContainerID, "procnode://"))
		Expect(err).NotTo(HaveOccurred(), "containerID %q", killed.Status.ContainerStatuses[0].ContainerID)
		// The container is a process group: torchrun and its workers.
		Expect(syscall.Kill(-pid, syscall.SIGKILL)).To(Succeed())
		w.expectTrainingAt(2)

		By("told to stop, it completes")
		Expect(os.WriteFile(filepath.Join(dir, "stop"), nil, 0o644)).To(Succeed())
		expectRealState(clientset, ns, job.Name, trainer.TrainJobComplete)

		By("the world size followed the size, and the global step never went back")
		starts := w.starts()
		var sizes []int
		for i, s := range starts {
			if i == 0 || s.world != starts[i-1].world {
				sizes = append(sizes, s.world)
			}
		}
		Expect(sizes).To(Equal([]int{2, 3, 2}), "the starts of node 0's log: %+v", starts)
		Expect(len(starts)).To(BeNumerically(">=", 4), "a start after the kill: %+v", starts)
		Expect(starts[0].step).To(BeZero())
		for i, s := range starts[1:] {
			Expect(s.step).To(BeNumerically(">", starts[i].step), "every start goes on from the one before: %+v", starts)
		}
		// Each start resumed from the latest checkpoint: at most the
		// steps since it were done again.
		for _, b := range w.before {
			Expect(b.start.step).To(BeNumerically(">=", b.reported-elasticCheckpointEvery),
				"the start after step %d was reported: %+v", b.reported, b.start)
		}

		By("the same JobSet throughout, never restarted; the killed node's pod restarted in place")
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Name}, js)).To(Succeed())
		Expect(js.UID).To(Equal(jobSetUID))
		Expect(js.Status.Restarts).To(BeZero())
		Expect(getTrainJob(Default, ns, job.Name).Status.Restarts).To(BeNil())
		var again *corev1.Pod
		for _, p := range podsOf(Default, ns, job.Name) {
			if p.UID == killed.UID {
				again = &p
			}
		}
		Expect(again).NotTo(BeNil(), "pod %s was replaced", killed.Name)
		Expect(again.Status.ContainerStatuses[0].RestartCount).To(BeEquivalentTo(1))
		Expect(trainerLogs(clientset, w.pod("0"), false)).To(ContainSubstring("parameters identical on all 2 ranks"))

		By("the goodput account saw the kill, which no restart record shows, by the run start rank 0 reported after it")
		done := withFinishedAccount(ns, job.Name)
		gp, run := done.Status.Goodput, done.Status.LastRunStart
		Expect(gp).NotTo(BeNil())
		Expect(run).NotTo(BeNil(), "train_ddp.py reports each run's start")
		Expect(run.FromStep).To(BeEquivalentTo(starts[len(starts)-1].step), "the last start, from the step node 0's log says")
		Expect(gp.RunStartTime).NotTo(BeNil())
		Expect(gp.RunStartTime.Time).To(BeTemporally("==", run.Time.Time), "the account counted the last run start")
		Expect(gp.Lost.RestartSeconds).To(BeNumerically(">", 0), "the kill's restart: %+v", *gp)
		Expect(gp.Lost.ResizeSeconds).To(BeNumerically(">", 0), "the two resizes: %+v", *gp)
		GinkgoWriter.Printf("goodput of the elastic job: %+v\n", *gp)
	})
})

// elasticCheckpointEvery is how many steps the spec's job trains between
// checkpoints.
const elasticCheckpointEvery = 5

// elasticStart is one start of the training processes, as a node's log
// says it: the world size of the group and the global step it resumed from.
type elasticStart struct{ world, step int }

var elasticStartLine = regexp.MustCompile(`rank \d+: world size (\d+), starting at global step (\d+)`)

// elasticWatch follows an elastic job through the log of its node 0 (the
// rendezvous host, which takes part in every start) and the progress its
// rank 0 reports.
type elasticWatch struct {
	clientset *kubernetes.Clientset
	ns, name  string
	// reported is the highest step reported so far.
	reported int
	// before pairs each start after the first with the highest step
	// reported before it.
	before []struct {
		reported int
		start    elasticStart
	}
}

// expectTrainingAt waits for a new start of the group at world size world,
// then for rank 0 to report ten steps past it at that size.
func (w *elasticWatch) expectTrainingAt(world int) {
	GinkgoHelper()
	seen := len(w.starts())
	var start elasticStart
	Eventually(func(g Gomega) {
		starts := w.startsOf(g)
		g.Expect(len(starts)).To(BeNumerically(">", seen), "a new start")
		start = starts[len(starts)-1]
		g.Expect(start.world).To(Equal(world), "the starts so far: %+v", starts)
	}, realJobTimeout, time.Second).Should(Succeed(), func() string { return allLogs(w.clientset, w.ns, w.name) })
	if seen > 0 {
		w.before = append(w.before, struct {
			reported int
			start    elasticStart
		}{w.reported, start})
	}
	Eventually(func(g Gomega) {
		ts := getTrainJob(g, w.ns, w.name).Status.TrainerStatus
		g.Expect(ts).NotTo(BeNil())
		g.Expect(metricValue(ts.Metrics, "world_size")).To(Equal(strconv.Itoa(world)))
		step, err := strconv.Atoi(metricValue(ts.Metrics, "step"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(step).To(BeNumerically(">=", start.step+10))
		w.reported = max(w.reported, step)
	}, realJobTimeout, time.Second).Should(Succeed(), func() string { return allLogs(w.clientset, w.ns, w.name) })
}

func (w *elasticWatch) starts() []elasticStart {
	GinkgoHelper()
	var out []elasticStart
	Eventually(func(g Gomega) { out = w.startsOf(g) }).Should(Succeed())
	return out
}

// startsOf reads the starts from node 0's log, or none before it runs.
func (w *elasticWatch) startsOf(g Gomega) []elasticStart {
	var pod *corev1.Pod
	for _, p := range podsOf(g, w.ns, w.name) {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "0" && p.Status.Phase != corev1.PodPending {
			pod = &p
		}
	}
	if pod == nil {
		return nil
	}
	data, err := w.clientset.CoreV1().Pods(w.ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "node"}).DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred(), "the log of pod %s", pod.Name)
	var out []elasticStart
	for _, m := range elasticStartLine.FindAllStringSubmatch(string(data), -1) {
		world, _ := strconv.Atoi(m[1])
		step, _ := strconv.Atoi(m[2])
		out = append(out, elasticStart{world, step})
	}
	return out
}

// pod is the job's running pod of a completion index.
func (w *elasticWatch) pod(index string) *corev1.Pod {
	GinkgoHelper()
	var pod *corev1.Pod
	Eventually(func(g Gomega) {
		pod = nil
		for _, p := range podsOf(g, w.ns, w.name) {
			if p.Annotations[batchv1.JobCompletionIndexAnnotation] == index && p.DeletionTimestamp == nil {
				pod = &p
			}
		}
		g.Expect(pod).NotTo(BeNil(), "no pod of index %s", index)
		g.Expect(pod.Status.ContainerStatuses).NotTo(BeEmpty())
	}).Should(Succeed())
	return pod
}

// hostPathOf is the host path of a volume of the runtime's first
// replicatedJob's pods.
func hostPathOf(rt *trainer.ClusterTrainingRuntime, volume string) string {
	GinkgoHelper()
	for _, v := range rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Volumes {
		if v.Name == volume && v.HostPath != nil {
			return v.HostPath.Path
		}
	}
	Fail(fmt.Sprintf("runtime %s has no hostPath volume %s", rt.Name, volume))
	return ""
}
