package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

var _ = Describe("training progress", func() {
	It("reported by the demo's training container reaches the TrainJob, kubectl get and the metrics", func() {
		ns := newNamespace()
		torchRuntime{annotations: map[string]string{runForAnnotation: "2m"}}.create(ns, "torch")
		trainJob(ns, "progress", "torch", 1, 0)
		expectState(ns, "progress", trainer.TrainJobRunning, trainer.TrainJobPodsRunningReason)

		By("the program of make demo plays the training container through the real protocol")
		playCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		Expect(cluster.PlayTrainingProgress(playCtx, simcluster.ProgressOptions{
			Namespace: ns, TrainJob: "progress", StatusAddr: tf.StatusAddr, Steps: 4, Every: 1500 * time.Millisecond,
		})).To(Succeed())

		By("in the TrainJob")
		ts := getTrainJob(Default, ns, "progress").Status.TrainerStatus
		Expect(ts).NotTo(BeNil())
		Expect(*ts.ProgressPercentage).To(Equal(int32(100)))
		Expect(*ts.EstimatedRemainingSeconds).To(Equal(int32(0)))
		Expect(ts.Metrics).To(ContainElement(trainer.Metric{Name: "step", Value: "4"}))

		By("in the table kubectl get prints")
		clientset, err := kubernetes.NewForConfig(cluster.Config)
		Expect(err).NotTo(HaveOccurred())
		table := trainJobTable(clientset, ns)
		var columns []string
		for _, c := range table.ColumnDefinitions {
			columns = append(columns, c.Name)
		}
		Expect(columns).To(Equal([]string{"Name", "Runtime", "State", "Nodes", "Progress", "Seconds Left", "Restarts", "Last Restart", "Checkpoint", "Goodput", "Age"}))
		Expect(table.Rows).To(HaveLen(1))
		Expect(tableCell(table, 0, "Progress")).To(Equal(float64(100)))
		Expect(tableCell(table, 0, "Seconds Left")).To(Equal(float64(0)))

		By("in the controller's metrics")
		Eventually(func(g Gomega) string { return metricsOf(g, ns) }).Should(And(
			ContainSubstring(`trainforge_trainjob_progress_percent{namespace="`+ns+`",trainjob="progress"} 100`),
			ContainSubstring(`trainforge_trainjob_estimated_remaining_seconds{namespace="`+ns+`",trainjob="progress"} 0`),
			ContainSubstring(`trainforge_trainjob_reported_metric{metric="loss",namespace="`+ns+`",trainjob="progress"} 0.4`),
		))
	})
})
