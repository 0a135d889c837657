package integration

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
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
		Expect(k8sClient.Create(ctx, torchRuntime(ns, "torch", false))).To(Succeed())
		job := trainJob(ns, "watched", "torch")
		job.Spec.Suspend = ptr.To(true)
		Expect(k8sClient.Create(ctx, job)).To(Succeed())
		suspended := func(g Gomega) *metav1.Condition {
			return conditionOf(trainJobOf(ns, "watched")(g), trainer.TrainJobSuspended)
		}
		Eventually(suspended).ShouldNot(BeNil())

		// A status edit alone reconciles nothing (the generation is
		// unchanged), so the condition removed here stays away. Retried:
		// a reconcile queued by the JobSet's creation may still restore it.
		Eventually(func(g Gomega) {
			got := trainJobOf(ns, "watched")(g)
			meta.RemoveStatusCondition(&got.Status.Conditions, trainer.TrainJobSuspended)
			g.Expect(k8sClient.Status().Update(ctx, got)).To(Succeed())
			g.Consistently(suspended).Should(BeNil())
		}).Should(Succeed())

		// ...until a ConfigMap labelled for the TrainJob reconciles it.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings", Labels: map[string]string{watchedLabel: "watched"}}}
		Expect(k8sClient.Create(ctx, cm)).To(Succeed())
		Eventually(suspended).Should(HaveField("Status", metav1.ConditionTrue))
	})
})
