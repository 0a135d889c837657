package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		body, err := clientset.CoreV1().RESTClient().Get().
			AbsPath("/apis", trainer.GroupVersion.Group, trainer.GroupVersion.Version, "namespaces", ns, "trainjobs").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		Expect(err).NotTo(HaveOccurred())
		table := &metav1.Table{}
		Expect(json.Unmarshal(body, table)).To(Succeed())
		var columns []string
		for _, c := range table.ColumnDefinitions {
			columns = append(columns, c.Name)
		}
		Expect(columns).To(Equal([]string{"Name", "Runtime", "State", "Progress", "Seconds Left", "Restarts", "Last Restart", "Age"}))
		Expect(table.Rows).To(HaveLen(1))
		Expect(table.Rows[0].Cells[3:5]).To(Equal([]any{float64(100), float64(0)}))

		By("in the controller's metrics")
		Eventually(func(g Gomega) string {
			resp, err := http.Get("http://" + tf.MetricsAddr + "/metrics")
			g.Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			g.Expect(err).NotTo(HaveOccurred())
			var lines []string
			for _, l := range strings.Split(string(data), "\n") {
				if strings.Contains(l, `namespace="`+ns+`"`) {
					lines = append(lines, l)
				}
			}
			return strings.Join(lines, "\n")
		}).Should(And(
			ContainSubstring(`trainforge_trainjob_progress_percent{namespace="`+ns+`",trainjob="progress"} 100`),
			ContainSubstring(`trainforge_trainjob_estimated_remaining_seconds{namespace="`+ns+`",trainjob="progress"} 0`),
			ContainSubstring(`trainforge_trainjob_reported_metric{metric="loss",namespace="`+ns+`",trainjob="progress"} 0.4`),
		))
	})
})
