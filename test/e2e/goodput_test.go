package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/steplog"
)

// withFinishedAccount waits until the goodput account of a finished
// TrainJob is closed (its controller writes it after the TrainJob's own
// status write), and returns the TrainJob then.
func withFinishedAccount(ns, name string) *trainer.TrainJob {
	GinkgoHelper()
	var job *trainer.TrainJob
	Eventually(func(g Gomega) trainer.GoodputState {
		job = getTrainJob(g, ns, name)
		g.Expect(job.Status.Goodput).NotTo(BeNil(), "no goodput account")
		return job.Status.Goodput.State
	}).Should(Equal(trainer.GoodputFinished))
	return job
}

// readStepLog parses a --step-log file into its runs.
func readStepLog(path string) []steplog.Run {
	GinkgoHelper()
	runs, err := steplog.Read(path)
	Expect(err).NotTo(HaveOccurred())
	return runs
}

var _ = Describe("goodput of real training", func() {
	var ns string
	var clientset *kubernetes.Clientset
	BeforeEach(func() { ns, clientset = prepareRealJobs() })

	It("rides out a real failure, a suspension and a lost node, redoing only the steps after each fault's checkpoint, and accounts for its time as its own log does", func() {
		dir := processRuntime{restartPolicy: realRestartPolicy()}.create(ns, "steady")
		realTrainJob(ns, "steady", "steady", 1, "--steps=60", "--checkpoint-every=10", "--min-step-seconds=0.3", "--report-every-seconds=1",
			"--fail-at-step=15", "--fail-exit-code=134", "--fail-on-attempt=0", "--step-log=/checkpoints/steps.log", "--require-report")

		By("a real exit code 134 at step 15: restarted once, it resumes from step 10 and trains on")
		Eventually(func(g Gomega) {
			job := getTrainJob(g, ns, "steady")
			g.Expect(job.Status.Restarts).NotTo(BeNil())
			g.Expect(job.Status.TrainerStatus).NotTo(BeNil())
			step, err := strconv.Atoi(metricValue(job.Status.TrainerStatus.Metrics, "step"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(step).To(BeNumerically(">=", 30))
		}, realJobTimeout).Should(Succeed(), func() string { return allLogs(clientset, ns, "steady") })

		By("suspended, its process gets SIGTERM and checkpoints in its grace period; resumed, it goes on from there")
		setSuspend(ns, "steady", true)
		Eventually(func(g Gomega) string {
			data, err := os.ReadFile(filepath.Join(dir, "steps.log"))
			g.Expect(err).NotTo(HaveOccurred())
			return string(data)
		}, realJobTimeout).Should(ContainSubstring("sigterm "))
		Eventually(func(g Gomega) trainer.GoodputState {
			gp := getTrainJob(g, ns, "steady").Status.Goodput
			g.Expect(gp).NotTo(BeNil())
			return gp.State
		}).Should(Equal(trainer.GoodputSuspended))
		time.Sleep(3 * time.Second)
		setSuspend(ns, "steady", false)

		By("its node lost past step 45, killed without a grace period: it restarts on another node from the last checkpoint")
		var pod corev1.Pod
		Eventually(func(g Gomega) {
			job := getTrainJob(g, ns, "steady")
			g.Expect(job.Status.TrainerStatus).NotTo(BeNil())
			step, err := strconv.Atoi(metricValue(job.Status.TrainerStatus.Metrics, "step"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(step).To(BeNumerically(">=", 45))
			pods := &corev1.PodList{}
			g.Expect(k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: "steady"})).To(Succeed())
			running := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning })
			g.Expect(running).To(HaveLen(1))
			pod = running[0]
		}, realJobTimeout).Should(Succeed(), func() string { return allLogs(clientset, ns, "steady") })
		Expect(cluster.LoseNode(ctx, &pod)).To(Succeed())
		// The cluster's other specs have all three process nodes again.
		DeferCleanup(func() { Expect(cluster.ReviveNode(ctx, pod.Spec.NodeName)).To(Succeed()) })
		expectRealState(clientset, ns, "steady", trainer.TrainJobComplete)
		job := withFinishedAccount(ns, "steady")
		Expect(job.Status.Restarts).NotTo(BeNil())
		Expect(job.Status.Restarts.Count).To(BeEquivalentTo(2), "the failure's restart and the lost node's")
		Expect(job.Status.Restarts.CountedTowardsMax).To(BeEquivalentTo(1), "a lost node is not the training code's failure")

		runs := readStepLog(filepath.Join(dir, "steps.log"))
		Expect(runs).To(HaveLen(4), "the first run, the restart, the resumption, the restart after the lost node")
		Expect(runs[1].From).To(Equal(10), "the restart resumed from the checkpoint of step 10")
		Expect(runs[1].SIGTERM).To(BeTrue(), "the suspension stopped the second run with SIGTERM")
		Expect(runs[2].From).To(Equal(runs[1].Steps[len(runs[1].Steps)-1]), "the resumption went on from the SIGTERM checkpoint")
		Expect(runs[2].SIGTERM).To(BeFalse(), "a lost node's processes get no SIGTERM")
		lost := runs[2].Steps[len(runs[2].Steps)-1]
		Expect(runs[3].From).To(And(BeNumerically(">=", lost-10), BeNumerically("<=", lost)), "the restart after the lost node resumed from its last checkpoint (every 10 steps)")
		Expect(job.Status.LastRunStart).NotTo(BeNil(), "train_ddp.py reports each run's start")
		Expect(job.Status.LastRunStart.FromStep).To(BeEquivalentTo(runs[3].From), "the last run's start, from the step its log says")
		var want []int
		for s := 11; s <= 15; s++ {
			want = append(want, s)
		}
		for s := runs[3].From + 1; s <= lost; s++ {
			want = append(want, s)
		}
		Expect(steplog.RedoneSteps(runs)).To(Equal(want), "each failure redid the steps after its checkpoint, at most 10; the suspension none")
		GinkgoWriter.Printf("from the last step to the first step again: the exit 134 %.1fs, the lost node %.1fs\n",
			runs[1].Times[0]-runs[0].Times[len(runs[0].Times)-1], runs[3].Times[0]-runs[2].Times[len(runs[2].Times)-1])

		By("the goodput account agrees with the log")
		gp := job.Status.Goodput
		Expect(gp).NotTo(BeNil())
		l := gp.Lost
		Expect(gp.State).To(Equal(trainer.GoodputFinished))
		Expect(gp.ProductiveSeconds + l.WaitingSeconds + l.StartUpSeconds + l.RestartSeconds + l.ResizeSeconds + l.RedoneSeconds).To(Equal(gp.ElapsedSeconds))
		kept := steplog.KeptSeconds(runs)
		// Steps 11..15 of the first run, and those after the last
		// checkpoint of the third.
		redone := runs[0].Times[len(runs[0].Times)-1] - runs[0].Times[9]
		if i := slices.Index(runs[2].Steps, runs[3].From); i >= 0 {
			redone += runs[2].Times[len(runs[2].Times)-1] - runs[2].Times[i]
		}
		report := fmt.Sprintf("account %+v; the log: %.1fs kept over %d runs, %.1fs redone", *gp, kept, len(runs), redone)
		GinkgoWriter.Println(report)
		// Each run's two ends are read from records of whole seconds (the
		// first report, the disruption or the end), and a disruption is
		// recorded when the cluster sees it, up to a few seconds after the
		// process stops: a few seconds per run, the log's own figures
		// being exact.
		Expect(float64(gp.ProductiveSeconds)).To(BeNumerically("~", kept, 2*len(runs)), report)
		Expect(float64(l.RedoneSeconds)).To(BeNumerically(">=", redone-1), report)
		Expect(float64(l.RedoneSeconds)).To(BeNumerically("<=", redone+2*15), "the failures' redone work, and the seconds until each was seen: %s", report)
		Expect(l.RestartSeconds).To(BeNumerically(">", 0), report)
		Expect(l.WaitingSeconds).To(BeNumerically(">=", 3), "suspended three seconds at least: %s", report)

		By("in the table and the metrics")
		Expect(tableCell(trainJobTable(clientset, ns), 0, "Goodput")).To(Equal(float64(gp.Percent)))
		Eventually(func(g Gomega) string { return metricsOf(g, ns) }).Should(And(
			ContainSubstring(fmt.Sprintf(`trainforge_trainjob_goodput_ratio{namespace="%s",trainjob="steady"} `, ns)),
			ContainSubstring(fmt.Sprintf(`trainforge_trainjob_goodput_lost_seconds{cause="redone",namespace="%s",trainjob="steady"} %d`, ns, l.RedoneSeconds)),
		))
	})
})
