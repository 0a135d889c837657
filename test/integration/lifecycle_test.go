package integration

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// stateColumn returns the State column of a TrainJob as the API server
// prints it for kubectl get (a Table), from the CRD's printer column.
func stateColumn(g Gomega, ns, name string) string {
	cs, err := kubernetes.NewForConfig(restConfig)
	g.Expect(err).NotTo(HaveOccurred())
	body, err := cs.CoreV1().RESTClient().Get().
		AbsPath("apis", trainer.GroupVersion.Group, trainer.GroupVersion.Version, "namespaces", ns, "trainjobs", name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred(), string(body))
	table := &metav1.Table{}
	g.Expect(json.Unmarshal(body, table)).To(Succeed())
	g.Expect(table.Rows).To(HaveLen(1))
	for i, col := range table.ColumnDefinitions {
		if col.Name == "State" {
			state, _ := table.Rows[0].Cells[i].(string)
			return state
		}
	}
	Fail("the TrainJob table has no State column")
	return ""
}

// setJobSetStatus writes a JobSet's status as the JobSet controller would;
// the suite runs none.
func setJobSetStatus(ns, name string, status jobsetv1alpha2.JobSetStatus) {
	Eventually(func(g Gomega) {
		js := jobSetOf(ns, name)(g)
		js.Status = status
		g.Expect(k8sClient.Status().Update(ctx, js)).To(Succeed())
	}).Should(Succeed())
}

func setSuspend(ns, name string, suspend bool) {
	Eventually(func(g Gomega) {
		job := trainJobOf(ns, name)(g)
		job.Spec.Suspend = ptr.To(suspend)
		g.Expect(k8sClient.Update(ctx, job)).To(Succeed())
	}).Should(Succeed())
}

func nodeJobs(ready, succeeded, active int32) []jobsetv1alpha2.ReplicatedJobStatus {
	return []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Ready: ready, Succeeded: succeeded, Active: active}}
}

var _ = Describe("a TrainJob's Running condition and State column", func() {
	It("follow its JobSet: Created, Running, Suspended, Created, Running, Complete", func() {
		ns := newNamespace()
		rt := torchRuntime(ns, "torch", false)
		rt.Spec.Template.Spec.ReplicatedJobs = rt.Spec.Template.Spec.ReplicatedJobs[1:] // the trainer only
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		Expect(k8sClient.Create(ctx, trainJob(ns, "life", "torch"))).To(Succeed())
		Eventually(jobSetOf(ns, "life")).Should(Not(BeNil()))

		expectState := func(state, runningReason string) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				g.Expect(stateColumn(g, ns, "life")).To(Equal(state))
				running := conditionOf(trainJobOf(ns, "life")(g), trainer.TrainJobRunning)
				g.Expect(running).NotTo(BeNil())
				g.Expect(running.Reason).To(Equal(runningReason))
			}).Should(Succeed())
		}
		By("created: its pods are not running yet")
		expectState(trainer.TrainJobCreated, trainer.TrainJobPodsPendingReason)

		By("the trainer Job has all its pods ready")
		setJobSetStatus(ns, "life", jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: nodeJobs(1, 0, 1)})
		expectState(trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)

		By("suspended")
		setSuspend(ns, "life", true)
		expectState(trainer.TrainJobSuspended, trainer.TrainJobSuspendedReason)

		By("resumed: Created again until the pods are back")
		setJobSetStatus(ns, "life", jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: nodeJobs(0, 0, 1)})
		setSuspend(ns, "life", false)
		expectState(trainer.TrainJobCreated, trainer.TrainJobPodsPendingReason)
		setJobSetStatus(ns, "life", jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: nodeJobs(1, 0, 1)})
		expectState(trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)

		By("the JobSet completes")
		setJobSetStatus(ns, "life", jobsetv1alpha2.JobSetStatus{
			Conditions: []metav1.Condition{{
				Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted",
				Message: "jobset completed successfully", LastTransitionTime: metav1.Now(),
			}},
			ReplicatedJobsStatus: nodeJobs(0, 1, 0),
		})
		expectState(trainer.TrainJobComplete, trainer.TrainJobCompletedReason)
		Expect(trainJobOf(ns, "life")(Default).Status.JobsStatus).To(ConsistOf(trainer.JobStatus{
			Name: "node", Ready: ptr.To[int32](0), Succeeded: ptr.To[int32](1), Failed: ptr.To[int32](0),
			Active: ptr.To[int32](0), Suspended: ptr.To[int32](0),
		}))
		// An Event when it starts running; not when Running turns False:
		// Suspended and Complete have their own.
		Eventually(func(g Gomega) []string { return eventReasons(g, ns, "life") }).Should(ContainElements(
			trainer.TrainJobPodsRunningReason, trainer.TrainJobSuspendedReason, "AllJobsCompleted"))
		Expect(eventReasons(Default, ns, "life")).NotTo(ContainElements(trainer.TrainJobPodsPendingReason, trainer.TrainJobCompletedReason))
	})
})
