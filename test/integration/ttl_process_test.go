package integration

import (
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// lifecycleConfig runs the default built-ins in process and serves the
// per-TrainJob state metric too.
const lifecycleConfig = `apiVersion: config.trainforge.dev/v1alpha1
kind: Configuration
metrics:
  bindAddress: {{ .MetricsAddr }}
  perTrainJob: true
health:
  healthProbeBindAddress: {{ .ProbeAddr }}
webhook:
  port: {{ .WebhookPort }}
  certDir: {{ .CertDir }}
`

var _ = Describe("the trainforge-controller binary, killed and started again", Ordered, func() {
	var (
		env  *processEnv
		c    client.Client
		proc *controllerProcess
		ns   string
	)

	BeforeAll(func() {
		env = startProcessEnv("trainforge-lifecycle-")
		c = env.client
		proc = env.startController(lifecycleConfig)
	})

	BeforeEach(func() {
		ns = createNamespaceIn(c)
		rt := torchRuntime(ns, "torch", false)
		rt.Spec.Template.Spec.ReplicatedJobs = rt.Spec.Template.Spec.ReplicatedJobs[1:] // the trainer only
		Expect(c.Create(ctx, rt)).To(Succeed())
	})

	It("serves the lifecycle metrics of a TrainJob that ran, restarted and completed", func() {
		Expect(c.Create(ctx, trainJob(ns, "ran", "torch"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ran"}, &jobsetv1alpha2.JobSet{})).To(Succeed())
		}).Should(Succeed())
		Eventually(proc.metric("trainforge_trainjob_creation_to_created_seconds_count", `runtime="torch"`, `runtime_kind="TrainingRuntime"`)).Should(Equal("1"))
		Eventually(proc.metric("trainforge_trainjobs", `runtime="torch"`, `state="Created"`)).Should(Equal("1"))

		By("running")
		setStatusOf(c, ns, "ran", func(st *jobsetv1alpha2.JobSetStatus) { st.ReplicatedJobsStatus = nodeJobs(1, 0, 1) })
		Eventually(proc.metric("trainforge_trainjobs", `runtime="torch"`, `state="Running"`)).Should(Equal("1"))
		Eventually(proc.metric("trainforge_trainjob_creation_to_running_seconds_count", `runtime="torch"`)).Should(Equal("1"))
		Expect(proc.metric("trainforge_trainjob_state", `trainjob="ran"`, `namespace="`+ns+`"`, `state="Running"`)(Default)).To(Equal("1"))

		By("restarted once by its JobSet, which counts toward maxRestarts")
		setStatusOf(c, ns, "ran", func(st *jobsetv1alpha2.JobSetStatus) { st.Restarts, st.RestartsCountTowardsMax = 1, 1 })
		Eventually(proc.metric("trainforge_trainjob_restarts_total", `runtime="torch"`, `counts_toward_max="true"`)).Should(Equal("1"))

		By("completed")
		setStatusOf(c, ns, "ran", func(st *jobsetv1alpha2.JobSetStatus) {
			st.Conditions = []metav1.Condition{{Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "done", LastTransitionTime: metav1.Now()}}
			st.ReplicatedJobsStatus = nodeJobs(0, 1, 0)
		})
		Eventually(proc.metric("trainforge_trainjobs", `runtime="torch"`, `state="Complete"`)).Should(Equal("1"))
		Expect(proc.metric("trainforge_trainjobs", `runtime="torch"`, `state="Running"`)(Default)).To(Equal("0"))
		Expect(proc.metric("trainforge_trainjob_completions_total", `runtime="torch"`)(Default)).To(Equal("1"))
		Expect(proc.metric("trainforge_trainjob_run_duration_seconds_count", `runtime="torch"`, `result="Complete"`)(Default)).To(Equal("1"))
	})

	It("deletes finished TrainJobs when their TTL passes, counted from when they finished, across a controller restart", func() {
		// expired's TTL passes while no controller runs; kept's after the
		// new controller started, which must not count it from its own
		// start.
		for name, ttl := range map[string]int32{"expired": 3, "kept": 20} {
			job := trainJob(ns, name, "torch")
			job.Spec.TTLSecondsAfterFinished = ptr.To(ttl)
			Expect(c.Create(ctx, job)).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &jobsetv1alpha2.JobSet{})).To(Succeed())
			}).Should(Succeed())
		}
		finishJobSet(c, ns, "expired", jobsetv1alpha2.JobSetCompleted)
		finishJobSet(c, ns, "kept", jobsetv1alpha2.JobSetFailed)
		expiredAt := finishedAt(c, ns, "expired", trainer.TrainJobComplete)
		keptAt := finishedAt(c, ns, "kept", trainer.TrainJobFailed)

		By("killing the controller")
		Expect(proc.cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
		Eventually(proc.exited).Should(BeClosed())
		time.Sleep(time.Until(expiredAt.Add(8 * time.Second)))
		Expect(trainJobIn(c, ns, "expired").DeletionTimestamp).To(BeNil(), "no controller runs")

		By("starting it again")
		restarted := time.Now()
		proc = env.startController(lifecycleConfig)
		// Its TTL passed while no controller ran: deleted at once.
		deleted := deletedInForegroundAt(c, ns, "expired", 5*time.Second)
		Expect(deleted).To(BeTemporally(">=", restarted.Truncate(time.Second)))

		deleted = deletedInForegroundAt(c, ns, "kept", 40*time.Second)
		Expect(deleted).To(BeTemporally(">=", keptAt.Add(20*time.Second)))
		// Counted from the new controller's start it would be 20s after
		// the restart, at least 27s after it failed.
		Expect(deleted).To(BeTemporally("<", keptAt.Add(25*time.Second)))
	})
})

// createNamespaceIn creates a namespace with a generated name.
func createNamespaceIn(c client.Client) string {
	GinkgoHelper()
	ns := &corev1.Namespace{}
	ns.GenerateName = "lifecycle-"
	Expect(c.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// setStatusOf changes a JobSet's status as the JobSet controller would.
func setStatusOf(c client.Client, ns, name string, change func(*jobsetv1alpha2.JobSetStatus)) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		js := &jobsetv1alpha2.JobSet{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, js)).To(Succeed())
		change(&js.Status)
		g.Expect(c.Status().Update(ctx, js)).To(Succeed())
	}).Should(Succeed())
}

func trainJobIn(c client.Client, ns, name string) *trainer.TrainJob {
	GinkgoHelper()
	job := &trainer.TrainJob{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)).To(Succeed())
	return job
}
