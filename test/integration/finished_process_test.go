package integration

import (
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/internal/controller"
)

// leaderConfig is lifecycleConfig with leader election, its lease in the
// default namespace.
const leaderConfig = lifecycleConfig + `leaderElection:
  leaderElect: true
  resourceNamespace: default
`

// A JobSet that finishes and is deleted at once (ttlSecondsAfterFinished
// 0, a garbage collector, a hand) between two reconciles of its TrainJob
// tells that the TrainJob finished only by its last state. The controller
// that reconciles next may not be the one that saw the deletion: it
// restarted, or another replica leads now.
var _ = Describe("a finished JobSet deleted while no controller reconciles", Ordered, func() {
	var (
		env *processEnv
		c   client.Client
		ns  string
	)

	BeforeAll(func() {
		env = startProcessEnv("trainforge-finished-")
		c = env.client
	})

	// createdAndKilled creates a runtime and TrainJob "done" (proc serves
	// the admission webhooks), waits for the JobSet proc builds, kills
	// proc, and then completes and deletes the JobSet: no controller
	// reconciles in between. alone says that no other controller runs.
	createdAndKilled := func(proc *controllerProcess, alone bool) {
		GinkgoHelper()
		ns = createNamespaceIn(c)
		rt := torchRuntime(ns, "torch", false)
		rt.Spec.Template.Spec.ReplicatedJobs = rt.Spec.Template.Spec.ReplicatedJobs[1:] // the trainer only
		Expect(c.Create(ctx, rt)).To(Succeed())
		Expect(c.Create(ctx, trainJob(ns, "done", "torch"))).To(Succeed())
		key := client.ObjectKey{Namespace: ns, Name: "done"}
		Eventually(func(g Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(c.Get(ctx, key, js)).To(Succeed())
			g.Expect(js.Finalizers).To(ContainElement(controller.StatusFinalizer))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(conditionOf(trainJobIn(c, ns, "done"), trainer.TrainJobCreated)).To(HaveField("Status", metav1.ConditionTrue))
		}).Should(Succeed())

		By("killing the controller")
		Expect(proc.cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
		Eventually(proc.exited).Should(BeClosed())

		By("completing the JobSet and deleting it, as its ttlSecondsAfterFinished 0 would")
		finishJobSet(c, ns, "done", jobsetv1alpha2.JobSetCompleted)
		js := &jobsetv1alpha2.JobSet{}
		Expect(c.Get(ctx, key, js)).To(Succeed())
		Expect(c.Delete(ctx, js)).To(Succeed())
		// Its finalizer keeps it, with its last state, for the next
		// controller.
		Expect(c.Get(ctx, key, js)).To(Succeed())
		Expect(js.DeletionTimestamp).NotTo(BeNil())
		if alone {
			Expect(isTrue(trainJobIn(c, ns, "done"), trainer.TrainJobComplete)).To(BeFalse(), "no controller saw the JobSet complete")
		}
	}

	// staysFinished checks that proc, which did not see the deletion,
	// finished the TrainJob from the deleted JobSet, counted it once, let
	// the JobSet go, and built none.
	staysFinished := func(proc *controllerProcess) {
		GinkgoHelper()
		key := client.ObjectKey{Namespace: ns, Name: "done"}
		Eventually(func(g Gomega) string {
			job := &trainer.TrainJob{}
			g.Expect(c.Get(ctx, key, job)).To(Succeed())
			return job.Status.Conditions[len(job.Status.Conditions)-1].Type
		}).Should(Equal(trainer.TrainJobComplete))
		Eventually(func() bool { return isNotFound(c.Get(ctx, key, &jobsetv1alpha2.JobSet{})) }).Should(BeTrue(), "the deleted JobSet is released")
		Eventually(proc.metric("trainforge_trainjob_completions_total", `runtime="torch"`)).Should(Equal("1"))
		Expect(proc.metric("trainforge_trainjob_state", `namespace="`+ns+`"`, `trainjob="done"`, `state="Complete"`)(Default)).To(Equal("1"))
		// A finished TrainJob is never built again; this controller built
		// nothing, before or after it finished.
		Expect(proc.metric("trainforge_object_applies_total", `kind="JobSet"`, `result="applied"`)(Default)).To(BeEmpty())
		Expect(isNotFound(c.Get(ctx, key, &jobsetv1alpha2.JobSet{}))).To(BeTrue(), "the JobSet of a finished TrainJob was built again")
	}

	It("stays finished when the controller is killed before it reconciles, its JobSet not built again, counted once", func() {
		createdAndKilled(env.startController(lifecycleConfig), true)
		By("starting the controller again")
		staysFinished(env.startController(lifecycleConfig))
	})

	It("stays finished when leadership moves before a reconcile, its JobSet not built again, counted once", func() {
		leader := env.startController(leaderConfig)
		Eventually(leader.metric("leader_election_master_status")).Should(Equal("1"))
		// The standby serves the webhooks on a port of its own: the API
		// server calls the leader's.
		standbyWebhook := env.webhook
		standbyWebhook.LocalServingPort = freePort()
		standby := startController(env.bin, env.dir, env.kubeconfigPath, standbyWebhook, leaderConfig)
		Expect(standby.metric("leader_election_master_status")(Default)).NotTo(Equal("1"))

		// The leader's lease outlives it: the standby takes over only
		// once it has expired, after the JobSet went.
		createdAndKilled(leader, false)
		By("the standby taking over")
		Eventually(standby.metric("leader_election_master_status"), "60s").Should(Equal("1"))
		staysFinished(standby)
	})
})

func isTrue(job *trainer.TrainJob, typ string) bool {
	c := conditionOf(job, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}
