package integration

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// plainClusterRuntime is a cluster runtime whose trainer step runs image on
// numNodes nodes.
func plainClusterRuntime(name, image string, numNodes int32) *trainer.ClusterTrainingRuntime {
	rj := replicatedJobOf("node", trainer.TrainerStep, "node")
	rj.Template.Spec.Template.Spec.Containers[0].Image = image
	return &trainer.ClusterTrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To(numNodes)},
			Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{rj}}},
		},
	}
}

func clusterTrainJob(ns, name, runtimeName string, suspend bool) *trainer.TrainJob {
	job := trainJob(ns, name, runtimeName)
	job.Spec.RuntimeRef.Kind = ptr.To(trainer.ClusterTrainingRuntimeKind)
	job.Spec.Suspend = ptr.To(suspend)
	return job
}

// snapshotOf waits for a TrainJob's snapshot and returns it.
func snapshotOf(ns, name string) *trainer.RuntimeSnapshot {
	var snap *trainer.RuntimeSnapshot
	Eventually(func(g Gomega) {
		snap = trainJobOf(ns, name)(g).Status.RuntimeSnapshot
		g.Expect(snap).NotTo(BeNil(), "TrainJob %s has no snapshot yet", name)
	}).Should(Succeed())
	return snap
}

// trainerImageAndPods returns the image and the pod count of a JobSet's trainer step.
func trainerImageAndPods(js *jobsetv1alpha2.JobSet) (string, int32) {
	return container(js, "node", "node").Image, ptr.Deref(replicatedJob(js, "node").Template.Spec.Parallelism, 0)
}

func resume(ns, name string) {
	Eventually(func() error {
		job := trainJobOf(ns, name)(Default)
		job.Spec.Suspend = ptr.To(false)
		return k8sClient.Update(ctx, job)
	}).Should(Succeed())
}

var _ = Describe("a TrainJob's runtime snapshot", func() {
	var ns, rtName string
	BeforeEach(func() {
		ns = newNamespace()
		// Cluster-scoped: one name per spec.
		rtName = "snapshot-" + ns
	})

	It("is recorded in the status with the runtime's generation and its spec as stored", func() {
		createCleaned(plainClusterRuntime(rtName, "busybox:1", 2))
		Expect(k8sClient.Create(ctx, clusterTrainJob(ns, "pinned", rtName, true))).To(Succeed())

		snap := snapshotOf(ns, "pinned")
		rt := &trainer.ClusterTrainingRuntime{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: rtName}, rt)).To(Succeed())
		Expect(snap.APIGroup).To(Equal(trainer.GroupVersion.Group))
		Expect(snap.Kind).To(Equal(trainer.ClusterTrainingRuntimeKind))
		Expect(snap.Name).To(Equal(rtName))
		Expect(snap.Generation).To(Equal(rt.Generation))
		Expect(snap.Generation).To(BeNumerically(">", 0))

		// The API server keeps the schemaless spec whole: nothing pruned.
		job := &unstructured.Unstructured{}
		job.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.TrainJobKind))
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "pinned"}, job)).To(Succeed())
		stored, found, err := unstructured.NestedMap(job.Object, "status", "runtimeSnapshot", "spec")
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(BeTrue())
		storedJSON, err := json.Marshal(stored)
		Expect(err).NotTo(HaveOccurred())
		runtimeJSON, err := json.Marshal(rt.Spec)
		Expect(err).NotTo(HaveOccurred())
		Expect(storedJSON).To(MatchJSON(runtimeJSON))

		// The State column still shows the last condition.
		Eventually(func(g Gomega) {
			rows := trainJobTable(g, ns).Rows
			g.Expect(rows).To(HaveLen(1))
			g.Expect(rows[0].Cells[2]).To(Equal(trainer.TrainJobSuspended))
		}).Should(Succeed())
	})

	It("keeps a suspended TrainJob on its runtime as it was; a new TrainJob gets the edited runtime", func() {
		createCleaned(plainClusterRuntime(rtName, "busybox:1", 2))
		Expect(k8sClient.Create(ctx, clusterTrainJob(ns, "queued", rtName, true))).To(Succeed())
		Eventually(func(g Gomega) bool { return ptr.Deref(jobSetOf(ns, "queued")(g).Spec.Suspend, false) }).Should(BeTrue())
		generation := snapshotOf(ns, "queued").Generation

		// The administrator moves the runtime to a new image and size.
		Eventually(func() error {
			rt := &trainer.ClusterTrainingRuntime{}
			if err := k8sClient.Get(ctx, types.NamespacedName{Name: rtName}, rt); err != nil {
				return err
			}
			rt.Spec = plainClusterRuntime(rtName, "busybox:2", 3).Spec
			return k8sClient.Update(ctx, rt)
		}).Should(Succeed())

		// Admitted later, as Kueue does: the resume re-applies the JobSet.
		resume(ns, "queued")
		Eventually(func(g Gomega) {
			js := jobSetOf(ns, "queued")(g)
			g.Expect(js.Spec.Suspend).To(Equal(ptr.To(false)))
			image, pods := trainerImageAndPods(js)
			g.Expect(image).To(Equal("busybox:1"))
			g.Expect(pods).To(Equal(int32(2)))
		}).Should(Succeed())
		Expect(trainJobOf(ns, "queued")(Default).Status.RuntimeSnapshot.Generation).To(Equal(generation))

		Expect(k8sClient.Create(ctx, clusterTrainJob(ns, "fresh", rtName, false))).To(Succeed())
		Eventually(func(g Gomega) {
			image, pods := trainerImageAndPods(jobSetOf(ns, "fresh")(g))
			g.Expect(image).To(Equal("busybox:2"))
			g.Expect(pods).To(Equal(int32(3)))
		}).Should(Succeed())
		Expect(snapshotOf(ns, "fresh").Generation).To(Equal(generation + 1))
	})

	It("lets a TrainJob whose runtime was deleted while it was suspended resume and run to completion", func() {
		rt := plainClusterRuntime(rtName, "busybox:1", 2)
		createCleaned(rt)
		Expect(k8sClient.Create(ctx, clusterTrainJob(ns, "orphan", rtName, true))).To(Succeed())
		snapshotOf(ns, "orphan")
		Expect(k8sClient.Delete(ctx, rt)).To(Succeed())

		resume(ns, "orphan")
		Eventually(func(g Gomega) {
			js := jobSetOf(ns, "orphan")(g)
			g.Expect(js.Spec.Suspend).To(Equal(ptr.To(false)))
			image, pods := trainerImageAndPods(js)
			g.Expect(image).To(Equal("busybox:1"))
			g.Expect(pods).To(Equal(int32(2)))
			job := trainJobOf(ns, "orphan")(g)
			g.Expect(conditionOf(job, trainer.TrainJobCreated)).To(HaveField("Reason", trainer.TrainJobJobsCreatedReason))
			g.Expect(conditionOf(job, trainer.TrainJobSuspended)).To(HaveField("Reason", trainer.TrainJobResumedReason))
		}).Should(Succeed())

		js := jobSetOf(ns, "orphan")(Default)
		js.Status.Conditions = []metav1.Condition{{
			Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted",
			Message: "done", LastTransitionTime: metav1.Now(),
		}}
		Expect(k8sClient.Status().Update(ctx, js)).To(Succeed())
		Eventually(func(g Gomega) *metav1.Condition {
			return conditionOf(trainJobOf(ns, "orphan")(g), trainer.TrainJobComplete)
		}).Should(HaveField("Status", metav1.ConditionTrue))
	})
})

var _ = Describe("the TrainJob CRD", func() {
	It("stays small: status.runtimeSnapshot.spec has no schema, so no JobSet schema is embedded", func() {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "trainjobs." + trainer.GroupVersion.Group}, u)).To(Succeed())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd)).To(Succeed())
		Expect(crd.Spec.Versions).To(HaveLen(1))

		status := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
		spec := status.Properties["runtimeSnapshot"].Properties["spec"]
		Expect(spec.Type).To(Equal("object"))
		Expect(spec.XPreserveUnknownFields).To(Equal(ptr.To(true)))
		Expect(spec.Properties).To(BeEmpty())

		// The runtime CRDs, which embed the JobSet schema, are about 1 MB.
		data, err := json.Marshal(crd.Spec)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(data)).To(BeNumerically("<", 128<<10), "the TrainJob CRD's spec is %d bytes", len(data))
	})
})
