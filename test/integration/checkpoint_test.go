package integration

import (
	"encoding/json"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// lastCheckpointOf reads the TrainJob's status.lastCheckpoint.
func lastCheckpointOf(ns, name string) func(Gomega) *trainer.CheckpointStatus {
	return func(g Gomega) *trainer.CheckpointStatus { return trainJobOf(ns, name)(g).Status.LastCheckpoint }
}

// statusManagers maps each field manager of the TrainJob's status to the
// status fields it owns.
func statusManagers(ns, name string) map[string][]string {
	GinkgoHelper()
	out := map[string][]string{}
	for _, mf := range trainJobOf(ns, name)(Default).ManagedFields {
		if mf.Subresource != "status" || mf.Operation != metav1.ManagedFieldsOperationApply {
			continue
		}
		fields := map[string]map[string]any{}
		Expect(json.Unmarshal(mf.FieldsV1.Raw, &fields)).To(Succeed())
		for k := range fields["f:status"] {
			out[mf.Manager] = append(out[mf.Manager], k)
		}
	}
	return out
}

var _ = Describe("checkpoints", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("tell the trainer of a runtime that names a checkpoint volume where to write and how long it has", func() {
		rt := torchRuntime(ns, "torch-ckpt", false)
		rt.Spec.Template.ObjectMeta.Annotations = map[string]string{trainer.CheckpointVolumeAnnotation: "checkpoints"}
		pod := &rt.Spec.Template.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec
		pod.TerminationGracePeriodSeconds = ptr.To[int64](90)
		pod.Volumes = []corev1.Volume{{Name: "checkpoints", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "llm-checkpoints"},
		}}}
		pod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "checkpoints", MountPath: "/checkpoints"}}
		Eventually(func() error { return k8sClient.Create(ctx, rt) }).Should(Succeed())
		Expect(k8sClient.Create(ctx, trainJob(ns, "ckpt", rt.Name))).To(Succeed())

		env := func(js *jobsetv1alpha2.JobSet, step string) map[string]string {
			out := map[string]string{}
			for _, rj := range js.Spec.ReplicatedJobs {
				if rj.Name == step {
					for _, e := range rj.Template.Spec.Template.Spec.Containers[0].Env {
						out[e.Name] = e.Value
					}
				}
			}
			return out
		}
		Eventually(func(g Gomega) {
			js := jobSetOf(ns, "ckpt")(g)
			g.Expect(env(js, "node")).To(HaveKeyWithValue(trainer.CheckpointDirEnv, "/checkpoints"))
			g.Expect(env(js, "node")).To(HaveKeyWithValue(trainer.CheckpointGraceSecondsEnv, "90"))
			g.Expect(env(js, "dataset-initializer")).NotTo(HaveKey(trainer.CheckpointDirEnv))
		}).Should(Succeed())

		By("a runtime whose checkpoint volume goes with its pods is refused, naming the annotation")
		bad := torchRuntime(ns, "torch-scratch", false)
		bad.Spec.Template.ObjectMeta.Annotations = map[string]string{trainer.CheckpointVolumeAnnotation: "scratch"}
		badPod := &bad.Spec.Template.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec
		badPod.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		badPod.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		err := k8sClient.Create(ctx, bad)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(`spec.template.metadata.annotations[trainforge.dev/checkpoint-volume]: Invalid value: "scratch": volume "scratch" is an emptyDir volume`))
	})

	It("are recorded in status.lastCheckpoint, which posts of progress alone leave as it is", func() {
		r := newReportingJob(ns, "saving")
		a := post(ns, "saving", r.token(), []byte(`{"checkpoint": {"step": 1200, "path": "/checkpoints/step-1200", "time": "2026-12-01T18:00:00Z"}}`))
		Expect(a.code).To(Equal(http.StatusOK), a.body)
		Expect(a.body).To(MatchJSON(`{"checkpoint": {"step": 1200, "path": "/checkpoints/step-1200", "time": "2026-12-01T18:00:00Z"}}`))
		cp := lastCheckpointOf(ns, "saving")(Default)
		Expect(cp).NotTo(BeNil())
		Expect(cp.Step).To(Equal(int64(1200)))
		Expect(cp.Path).To(Equal("/checkpoints/step-1200"))
		Expect(cp.Time.Time).To(BeTemporally("==", time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)))
		Expect(trainerStatusOf(ns, "saving")(Default)).To(BeNil(), "a checkpoint alone reports no progress")

		By("a Kubeflow post of progress leaves it")
		waitInterval()
		a = post(ns, "saving", r.token(), progressBody(40, 120))
		Expect(a.code).To(Equal(http.StatusOK), a.body)
		Expect(a.body).NotTo(ContainSubstring("checkpoint"), "Kubeflow's answer, unchanged")
		Expect(lastCheckpointOf(ns, "saving")(Default)).To(HaveField("Step", int64(1200)))
		Expect(trainerStatusOf(ns, "saving")(Default)).To(HaveField("ProgressPercentage", ptr.To[int32](40)))

		By("a post of both applies both; a checkpoint without a time gets the time it was received")
		waitInterval()
		body := `{"trainerStatus": {"progressPercentage": 60, "lastUpdatedTime": "2026-12-01T19:00:00Z"}, "checkpoint": {"step": 1800}}`
		a = post(ns, "saving", r.token(), []byte(body))
		Expect(a.code).To(Equal(http.StatusOK), a.body)
		cp = lastCheckpointOf(ns, "saving")(Default)
		Expect(cp.Step).To(Equal(int64(1800)))
		Expect(cp.Path).To(BeEmpty())
		Expect(cp.Time.Time).To(BeTemporally("~", metav1.Now().Time, 10*time.Second))
		Expect(trainerStatusOf(ns, "saving")(Default)).To(HaveField("ProgressPercentage", ptr.To[int32](60)))

		By("each field with a field manager of its own")
		Expect(statusManagers(ns, "saving")).To(And(
			HaveKeyWithValue("trainforge-status-server", ConsistOf("f:trainerStatus")),
			HaveKeyWithValue("trainforge-status-server-checkpoint", ConsistOf("f:lastCheckpoint")),
		))

		By("a bad checkpoint is refused, naming its field, and applies nothing")
		waitInterval()
		a = post(ns, "saving", r.token(), []byte(`{"trainerStatus": {"progressPercentage": 70, "lastUpdatedTime": "2026-12-01T19:30:00Z"}, "checkpoint": {"step": -5}}`))
		Expect(a.code).To(Equal(http.StatusUnprocessableEntity), a.body)
		Expect(a.body).To(ContainSubstring(`Invalid payload: checkpoint.step: Invalid value: -5: must be 0 or more`))
		Expect(trainerStatusOf(ns, "saving")(Default)).To(HaveField("ProgressPercentage", ptr.To[int32](60)))

		By("a token of another TrainJob's pod cannot record one")
		other := newReportingJob(ns, "other")
		a = post(ns, "saving", other.token(), []byte(`{"checkpoint": {"step": 1}}`))
		Expect(a.code).To(Equal(http.StatusForbidden), a.body)
		Expect(lastCheckpointOf(ns, "saving")(Default)).To(HaveField("Step", int64(1800)))
	})

	It("record the start of each run in status.lastRunStart, which the goodput account reads", func() {
		r := newReportingJob(ns, "starting")
		a := post(ns, "starting", r.token(), []byte(`{"runStart": {"fromStep": 0}}`))
		Expect(a.code).To(Equal(http.StatusOK), a.body)
		run := trainJobOf(ns, "starting")(Default).Status.LastRunStart
		Expect(run).NotTo(BeNil())
		Expect(run.FromStep).To(BeZero())
		Expect(run.Time.Time).To(BeTemporally("~", metav1.Now().Time, 10*time.Second))

		By("a post of progress and a checkpoint leaves it")
		waitInterval()
		a = post(ns, "starting", r.token(), []byte(`{"trainerStatus": {"progressPercentage": 10, "lastUpdatedTime": "2026-12-01T18:00:00Z"}, "checkpoint": {"step": 50}}`))
		Expect(a.code).To(Equal(http.StatusOK), a.body)
		Expect(a.body).NotTo(ContainSubstring("runStart"))
		Expect(trainJobOf(ns, "starting")(Default).Status.LastRunStart).To(HaveField("FromStep", int64(0)))

		By("the next run's start replaces it, with a field manager of its own")
		waitInterval()
		a = post(ns, "starting", r.token(), []byte(`{"runStart": {"fromStep": 50, "time": "2026-12-01T18:05:00Z"}}`))
		Expect(a.code).To(Equal(http.StatusOK), a.body)
		Expect(a.body).To(MatchJSON(`{"runStart": {"fromStep": 50, "time": "2026-12-01T18:05:00Z"}}`))
		run = trainJobOf(ns, "starting")(Default).Status.LastRunStart
		Expect(run.FromStep).To(Equal(int64(50)))
		Expect(run.Time.Time).To(BeTemporally("==", time.Date(2026, 12, 1, 18, 5, 0, 0, time.UTC)))
		Expect(statusManagers(ns, "starting")).To(And(
			HaveKeyWithValue("trainforge-status-server-run-start", ConsistOf("f:lastRunStart")),
			HaveKeyWithValue("trainforge-status-server-checkpoint", ConsistOf("f:lastCheckpoint")),
		))

		By("a bad run start is refused, naming its field")
		waitInterval()
		a = post(ns, "starting", r.token(), []byte(`{"runStart": {"fromStep": "fifty"}}`))
		Expect(a.code).To(Equal(http.StatusUnprocessableEntity), a.body)
		Expect(a.body).To(ContainSubstring(`Invalid payload: runStart.fromStep: Invalid value: \"fifty\": must be a number, not a string`))
		Expect(trainJobOf(ns, "starting")(Default).Status.LastRunStart).To(HaveField("FromStep", int64(50)))
	})
})
