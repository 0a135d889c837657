package integration

import (
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
)

var _ = Describe("the objects of a gang TrainJob", func() {
	// The default plugin order builds the JobSet (JobSet) before the
	// PodGroup (Coscheduling); the JobSet's pods must not reach the
	// scheduler before their PodGroup exists.
	It("are created PodGroup first, then JobSet", func() {
		ns := newNamespace()
		wc, err := client.NewWithWatch(restConfig, client.Options{Scheme: k8sClient.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		// The resourceVersion of an object's ADDED event is the revision
		// of its creation; the API server's revisions are ordered.
		created := func(list client.ObjectList) <-chan int64 {
			w, err := wc.Watch(ctx, list, client.InNamespace(ns))
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(w.Stop)
			out := make(chan int64, 1)
			go func() {
				defer GinkgoRecover()
				for e := range w.ResultChan() {
					if e.Type != watch.Added {
						continue
					}
					o := e.Object.(client.Object)
					rv, err := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
					Expect(err).NotTo(HaveOccurred())
					out <- rv
					return
				}
			}()
			return out
		}
		podGroup := created(&schedulingv1alpha1.PodGroupList{})
		jobSet := created(&jobsetv1alpha2.JobSetList{})

		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", true))).To(Succeed())
		Expect(k8sClient.Create(ctx, trainJob(ns, "gang", "torch"))).To(Succeed())
		var pg, js int64
		Eventually(podGroup).Should(Receive(&pg))
		Eventually(jobSet).Should(Receive(&js))
		Expect(pg).To(BeNumerically("<", js), "the PodGroup was created at revision %d, after the JobSet at %d", pg, js)
	})
})
