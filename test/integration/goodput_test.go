package integration

import (
	"encoding/json"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// goodputOf reads the TrainJob's status.goodput.
func goodputOf(ns, name string) func(Gomega) *trainer.GoodputStatus {
	return func(g Gomega) *trainer.GoodputStatus { return trainJobOf(ns, name)(g).Status.Goodput }
}

// expectBalanced fails unless the account's figures add up.
func expectBalanced(g Gomega, gp *trainer.GoodputStatus) {
	l := gp.Lost
	g.Expect(gp.ProductiveSeconds+l.WaitingSeconds+l.StartUpSeconds+l.RestartSeconds+l.ResizeSeconds+l.RedoneSeconds).
		To(Equal(gp.ElapsedSeconds), "productive and lost add up to elapsed: %+v", gp)
}

var _ = Describe("goodput", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("is unknown until the training code reports progress, then accounts for a suspension, and shows in the table and the metrics", func() {
		r := newReportingJob(ns, "accounted")
		setJobSetStatus(ns, "accounted", jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: nodeJobs(1, 0, 1)})
		Eventually(func(g Gomega) *metav1.Condition {
			return conditionOf(trainJobOf(ns, "accounted")(g), trainer.TrainJobRunning)
		}).Should(HaveField("Status", metav1.ConditionTrue))

		By("a checkpoint alone is no progress: no account")
		Expect(post(ns, "accounted", r.token(), []byte(`{"checkpoint": {"step": 1}}`)).code).To(Equal(http.StatusOK))
		Consistently(goodputOf(ns, "accounted"), 2*time.Second).Should(BeNil())

		By("the first progress report opens it, under a field manager of its own")
		waitInterval()
		Expect(post(ns, "accounted", r.token(), progressBody(10, 600)).code).To(Equal(http.StatusOK))
		Eventually(goodputOf(ns, "accounted")).Should(HaveField("State", trainer.GoodputTraining))
		Expect(statusManagers(ns, "accounted")).To(HaveKeyWithValue("trainforge-goodput", ConsistOf("f:goodput")))
		expectBalanced(Default, goodputOf(ns, "accounted")(Default))

		By("the table and the metrics show it")
		labels := map[string]string{"namespace": ns, "trainjob": "accounted"}
		Eventually(func(g Gomega) {
			gp := goodputOf(ns, "accounted")(g)
			table := trainJobTable(g, ns)
			g.Expect(table.Rows).To(HaveLen(1))
			for i, c := range table.ColumnDefinitions {
				if c.Name == "Goodput" {
					g.Expect(table.Rows[0].Cells[i]).To(Equal(float64(gp.Percent)))
				}
			}
			ratio := gaugeValue(g, "trainforge_trainjob_goodput_ratio", labels)
			g.Expect(ratio).NotTo(BeNil())
			g.Expect(*ratio).To(And(BeNumerically(">=", 0), BeNumerically("<=", 1)))
			g.Expect(gaugeValue(g, "trainforge_trainjob_goodput_lost_seconds", withCause(labels, "start_up"))).NotTo(BeNil())
		}).Should(Succeed())

		By("a suspension is time lost waiting; a checkpoint in its grace period saves the run")
		time.Sleep(2 * time.Second) // a run of a few seconds
		setSuspend(ns, "accounted", true)
		Eventually(goodputOf(ns, "accounted")).Should(HaveField("State", trainer.GoodputSuspended))
		waitInterval()
		Expect(post(ns, "accounted", r.token(), []byte(`{"checkpoint": {"step": 2}}`)).code).To(Equal(http.StatusOK))
		suspended := goodputOf(ns, "accounted")(Default)
		Expect(suspended.Unsettled).NotTo(BeNil(), "the run the suspension ended waits for the next one")
		Expect(suspended.ProductiveSeconds).To(BeNumerically(">=", 2))

		By("resumed, the job restarts until its first report")
		time.Sleep(2 * time.Second)
		setSuspend(ns, "accounted", false)
		Eventually(goodputOf(ns, "accounted")).Should(HaveField("State", trainer.GoodputRestarting))
		waitInterval()
		Expect(post(ns, "accounted", r.token(), progressBody(20, 500)).code).To(Equal(http.StatusOK))
		Eventually(goodputOf(ns, "accounted")).Should(HaveField("State", trainer.GoodputTraining))
		gp := goodputOf(ns, "accounted")(Default)
		expectBalanced(Default, gp)
		Expect(gp.Unsettled).To(BeNil())
		Expect(gp.Lost.RedoneSeconds).To(BeZero(), "checkpointed after the suspension: nothing to redo")
		Expect(gp.Lost.WaitingSeconds).To(BeNumerically(">=", 2), "suspended for two seconds at least")
		Expect(gp.Lost.RestartSeconds).To(BeNumerically(">=", 1), "resumed a second at least before the report")
		Expect(gp.ProductiveSeconds).To(Equal(suspended.ProductiveSeconds), "the run was kept whole")
		data, err := json.Marshal(gp)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("goodput after a suspension: %s\n", data)

		By("its series go with the TrainJob")
		Expect(k8sClient.Delete(ctx, trainJobOf(ns, "accounted")(Default))).To(Succeed())
		Eventually(func(g Gomega) *float64 {
			return gaugeValue(g, "trainforge_trainjob_goodput_ratio", labels)
		}).Should(BeNil())
	})
})

func withCause(labels map[string]string, cause string) map[string]string {
	out := map[string]string{"cause": cause}
	for k, v := range labels {
		out[k] = v
	}
	return out
}
