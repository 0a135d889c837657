package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// restartPolicy fails the job on exit code 3 and restarts it on 134.
func restartPolicy(maxRestarts int32) *trainer.RestartPolicy {
	return &trainer.RestartPolicy{
		MaxRestarts: ptr.To(maxRestarts),
		ExitCodes: []trainer.ExitCodeRule{
			{Action: trainer.FailOnExitCode, Values: []int32{3}},
			{Action: trainer.RestartOnExitCode, Values: []int32{134}},
		},
	}
}

var _ = Describe("a TrainJob's restart policy", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("reaches its JobSet as failurePolicy and podFailurePolicy, the TrainJob's budget over the runtime's", func() {
		rt := torchRuntime(ns, "torch", false)
		rt.Spec.RestartPolicy = restartPolicy(5)
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		job := trainJob(ns, "policy", "torch")
		job.Spec.RestartPolicy = &trainer.RestartPolicy{MaxRestarts: ptr.To[int32](2)}
		Expect(k8sClient.Create(ctx, job)).To(Succeed())

		var js *jobsetv1alpha2.JobSet
		Eventually(func(g Gomega) { js = jobSetOf(ns, "policy")(g) }).Should(Succeed())
		Expect(js.Spec.FailurePolicy).NotTo(BeNil())
		Expect(js.Spec.FailurePolicy.MaxRestarts).To(Equal(int32(2)))
		Expect(js.Spec.FailurePolicy.Rules).To(HaveExactElements(
			And(HaveField("Action", jobsetv1alpha2.FailJobSet), HaveField("OnJobFailureMessagePatterns", []string{`matching FailJob rule at index (0)$`})),
			And(HaveField("Action", jobsetv1alpha2.RestartJobSet), HaveField("OnJobFailureMessagePatterns", []string{`matching FailJob rule at index (1)$`})),
			And(HaveField("Action", jobsetv1alpha2.RestartJobSetAndIgnoreMaxRestarts), HaveField("OnJobFailureMessagePatterns", []string{`matching FailJob rule at index (2)$`})),
		))
		pfp := replicatedJob(js, "node").Template.Spec.PodFailurePolicy
		Expect(pfp).NotTo(BeNil())
		Expect(pfp.Rules).To(HaveLen(3))
		Expect(pfp.Rules[2].OnPodConditions).To(ConsistOf(batchv1.PodFailurePolicyOnPodConditionsPattern{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}))
	})

	It("is refused when it conflicts with the runtime's template, naming both fields", func() {
		rt := torchRuntime(ns, "torch", false)
		rt.Spec.Template.Spec.FailurePolicy = &jobsetv1alpha2.FailurePolicy{MaxRestarts: 5}
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		job := trainJob(ns, "clash", "torch")
		job.Spec.RestartPolicy = &trainer.RestartPolicy{MaxRestarts: ptr.To[int32](2)}
		err := k8sClient.Create(ctx, job)
		Expect(err).To(MatchError(And(
			ContainSubstring("spec.restartPolicy.maxRestarts"),
			ContainSubstring("spec.template.spec.failurePolicy.maxRestarts (5)"))))

		By("and an exit code out of range by the schema")
		job = trainJob(ns, "zero", "torch")
		job.Spec.RestartPolicy = &trainer.RestartPolicy{ExitCodes: []trainer.ExitCodeRule{{Action: trainer.FailOnExitCode, Values: []int32{0}}}}
		Expect(k8sClient.Create(ctx, job)).To(MatchError(ContainSubstring("spec.restartPolicy.exitCodes[0].values[0]")))
	})

	It("shows the JobSet's restarts: status.restarts, a Restarted Event, the Restarts column of -o wide", func() {
		rt := torchRuntime(ns, "torch", false)
		rt.Spec.RestartPolicy = restartPolicy(3)
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		Expect(k8sClient.Create(ctx, trainJob(ns, "flaky", "torch"))).To(Succeed())
		Eventually(jobSetOf(ns, "flaky")).Should(Not(BeNil()))

		By("the JobSet controller restarts it for exit code 134")
		setJobSetStatus(ns, "flaky", jobsetv1alpha2.JobSetStatus{
			Restarts: 1, RestartsCountTowardsMax: 1,
			Conditions: []metav1.Condition{{
				Type: string(jobsetv1alpha2.JobSetRestarting), Status: metav1.ConditionTrue,
				Reason:             "FailurePolicy_TrainforgeRestartOnExitCode",
				Message:            "applying RestartJobSet failure policy action (first failed job: flaky-node-0)",
				LastTransitionTime: metav1.Now(),
			}},
		})
		Eventually(func(g Gomega) {
			r := trainJobOf(ns, "flaky")(g).Status.Restarts
			g.Expect(r).NotTo(BeNil())
			g.Expect(r.Count).To(Equal(int32(1)))
			g.Expect(r.CountedTowardsMax).To(Equal(int32(1)))
			g.Expect(r.LastReason).To(Equal(trainer.RestartRetryableExitCodeReason))
			g.Expect(r.LastMessage).To(ContainSubstring("first failed job: flaky-node-0"))
		}).Should(Succeed())
		Eventually(func(g Gomega) []string { return eventReasons(g, ns, "flaky") }).Should(ContainElement(trainer.RestartedEventReason))

		By("kubectl get -o wide shows the count and the reason")
		Eventually(func(g Gomega) {
			table := trainJobTable(g, ns)
			g.Expect(table.Rows).To(HaveLen(1))
			cells := map[string]any{}
			for i, c := range table.ColumnDefinitions {
				cells[c.Name] = table.Rows[0].Cells[i]
				if c.Name == "Restarts" || c.Name == "Last Restart" {
					g.Expect(c.Priority).To(Equal(int32(1)), "column %s is for -o wide only", c.Name)
				}
			}
			g.Expect(cells).To(HaveKeyWithValue("Restarts", BeNumerically("==", 1)))
			g.Expect(cells).To(HaveKeyWithValue("Last Restart", trainer.RestartRetryableExitCodeReason))
		}).Should(Succeed())
	})

	DescribeTable("a finished TrainJob is never rebuilt when its JobSet goes",
		func(condition, reason string, want string) {
			Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
			Expect(k8sClient.Create(ctx, trainJob(ns, "done", "torch"))).To(Succeed())
			Eventually(jobSetOf(ns, "done")).Should(Not(BeNil()))
			setJobSetStatus(ns, "done", jobsetv1alpha2.JobSetStatus{Conditions: []metav1.Condition{{
				Type: condition, Status: metav1.ConditionTrue, Reason: reason, Message: "finished", LastTransitionTime: metav1.Now(),
			}}})
			Eventually(func(g Gomega) string { return stateColumn(g, ns, "done") }).Should(Equal(want))

			By("the JobSet is deleted (by hand, a TTL or a garbage collector)")
			js := jobSetOf(ns, "done")(Default)
			Expect(k8sClient.Delete(ctx, js)).To(Succeed())
			Eventually(func() bool {
				return isNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "done"}, &jobsetv1alpha2.JobSet{}))
			}).Should(BeTrue())

			By("the TrainJob is edited, which reconciles it again")
			Eventually(func(g Gomega) {
				job := trainJobOf(ns, "done")(g)
				job.Spec.Labels = map[string]string{"touched": "yes"}
				g.Expect(k8sClient.Update(ctx, job)).To(Succeed())
			}).Should(Succeed())

			Consistently(func() bool {
				return isNotFound(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "done"}, &jobsetv1alpha2.JobSet{}))
			}, 3*time.Second, 200*time.Millisecond).Should(BeTrue(), "the JobSet of a finished TrainJob was created again")
			Expect(stateColumn(Default, ns, "done")).To(Equal(want))
		},
		Entry("Complete", string(jobsetv1alpha2.JobSetCompleted), "AllJobsCompleted", trainer.TrainJobComplete),
		Entry("Failed", string(jobsetv1alpha2.JobSetFailed), "ReachedMaxRestarts", trainer.TrainJobFailed),
	)
})
