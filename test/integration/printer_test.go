package integration

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// trainJobTable asks the API server for TrainJobs as the table that
// `kubectl get trainjobs` prints.
func trainJobTable(g Gomega, ns string) *metav1.Table {
	clientset, err := kubernetes.NewForConfig(restConfig)
	g.Expect(err).NotTo(HaveOccurred())
	body, err := clientset.CoreV1().RESTClient().Get().
		AbsPath("/apis", trainer.GroupVersion.Group, trainer.GroupVersion.Version, "namespaces", ns, "trainjobs").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	table := &metav1.Table{}
	g.Expect(json.Unmarshal(body, table)).To(Succeed())
	return table
}

var _ = Describe("kubectl get trainjobs", func() {
	It("shows the runtime, the state, the nodes, the progress, the seconds left and the age", func() {
		ns := newNamespace()
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "listed", "torch")
		Expect(k8sClient.Create(ctx, job)).To(Succeed())

		Eventually(func(g Gomega) {
			table := trainJobTable(g, ns)
			var names []string
			for _, c := range table.ColumnDefinitions {
				names = append(names, c.Name)
			}
			g.Expect(names).To(Equal([]string{"Name", "Runtime", "State", "Nodes", "Progress", "Seconds Left", "Restarts", "Last Restart", "Checkpoint", "Goodput", "Age"}))
			g.Expect(table.Rows).To(HaveLen(1))
			g.Expect(table.Rows[0].Cells[:3]).To(Equal([]any{"listed", "torch", "Created"}))
		}).Should(Succeed())
	})
})
