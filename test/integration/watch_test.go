package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/trainforge/trainforge/framework"
)

const (
	configMapWatcherName = "ConfigMapWatcher"
	// watchedLabel names, on a ConfigMap, the TrainJob it belongs to.
	watchedLabel = "example.com/trainjob"
)

// configMapWatcher declares a watch of ConfigMaps mapped by label, as a
// plugin that reads its settings from a ConfigMap would.
type configMapWatcher struct{}

func (configMapWatcher) Describe() framework.Description {
	return framework.Description{Name: configMapWatcherName}
}

func (configMapWatcher) Watch(context.Context) ([]framework.WatchSource, error) {
	return []framework.WatchSource{{
		Kind:    corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		Mapping: framework.MapByLabel,
		Label:   watchedLabel,
	}}, nil
}

var _ = Describe("a kind a plugin declares through Watch", func() {
	It("reconciles the TrainJob its label names", func() {
		ns := newNamespace()
		rt := torchRuntime(ns, "torch", false)
		Expect(k8sClient.Create(ctx, rt)).To(Succeed())
		// Suspended: a running JobSet's pod template would be kept as is.
		job := trainJob(ns, "watched", "torch")
		job.Spec.Suspend = ptr.To(true)
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		Eventually(jobSetOf(ns, "watched")).Should(Not(BeNil()))

		// A runtime change alone does not reconcile a started TrainJob...
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "torch"}, rt)).To(Succeed())
		rt.Spec.Template.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.Containers[0].Image = "busybox:2"
		Expect(k8sClient.Update(ctx, rt)).To(Succeed())
		Consistently(func(g Gomega) string {
			return container(jobSetOf(ns, "watched")(g), "node", "node").Image
		}).Should(Equal("busybox"))

		// ...but a ConfigMap labelled for it does.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings", Labels: map[string]string{watchedLabel: "watched"}}}
		Expect(k8sClient.Create(ctx, cm)).To(Succeed())
		Eventually(func(g Gomega) string {
			return container(jobSetOf(ns, "watched")(g), "node", "node").Image
		}).Should(Equal("busybox:2"))
	})
})
