package integration

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// The Flux plugin, run by the real controller as a real process
// (vendor_harness_test.go), on Kubeflow Trainer's flux-distributed runtime
// and its LAMMPS TrainJob.
var _ = Describe("the Flux plugin, run as a process by the trainforge-controller binary", Ordered, func() {
	var h *vendorHarness
	BeforeAll(func() { h = startVendorHarness() })

	// lammps is Kubeflow Trainer's LAMMPS example on its flux-distributed
	// runtime, in a namespace of its own.
	lammps := func(name string) *trainer.TrainJob {
		ns := h.newNamespace()
		Expect(h.client.Create(ctx, vendorRuntime(ns, "flux-distributed", "flux", "{}", "ubuntu:jammy"))).To(Succeed())
		job := trainJob(ns, name, "flux-distributed")
		job.Spec.Trainer = &trainer.Trainer{
			NumNodes:       ptr.To[int32](2),
			NumProcPerNode: ptr.To(intstr.FromInt32(4)),
			Image:          ptr.To("ghcr.io/converged-computing/metric-lammps:latest"),
			Command:        []string{"lmp", "-v", "x", "4", "-in", "in.reaxc.hns", "-nocite"},
			Env:            []corev1.EnvVar{{Name: "FLUX_VIEW_IMAGE", Value: "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"}},
		}
		return job
	}

	// built returns what the controller built for a TrainJob: its JobSet,
	// scripts' ConfigMap and CURVE Secret, once all three exist.
	built := func(job *trainer.TrainJob) (*jobsetv1alpha2.JobSet, *corev1.ConfigMap, *corev1.Secret) {
		js, cm, secret := &jobsetv1alpha2.JobSet{}, &corev1.ConfigMap{}, &corev1.Secret{}
		key := func(name string) types.NamespacedName {
			return types.NamespacedName{Namespace: job.Namespace, Name: name}
		}
		Eventually(func(g Gomega) {
			g.Expect(h.client.Get(ctx, key(job.Name), js)).To(Succeed())
			g.Expect(h.client.Get(ctx, key(job.Name+"-flux-entrypoint"), cm)).To(Succeed())
			g.Expect(h.client.Get(ctx, key(job.Name+"-flux-curve"), secret)).To(Succeed())
		}).Should(Succeed(), func() string { return "TrainJob " + job.Name + ": " + h.conditions(key(job.Name)) })
		return js, cm, secret
	}

	It("give Kubeflow's LAMMPS TrainJob Kubeflow's pods: the installer, the wrapped command, the volumes, the scripts and the CURVE certificate", func() {
		job := lammps("lammps-flux")
		Expect(h.client.Create(ctx, job)).To(Succeed())
		js, cm, secret := built(job)

		rj, c := trainerOf(js)
		Expect(rj.Replicas).To(Equal(int32(1)))
		Expect(rj.Template.Spec.Parallelism).To(Equal(ptr.To[int32](2)))
		Expect(c.Image).To(Equal("ghcr.io/converged-computing/metric-lammps:latest"))
		Expect(c.Command).To(Equal([]string{"/bin/bash", "/etc/flux-config/entrypoint.sh", "lmp -v x 4 -in in.reaxc.hns -nocite"}))
		Expect(c.Args).To(BeEmpty())
		Expect(c.VolumeMounts).To(HaveExactElements(
			corev1.VolumeMount{Name: "flux-install", MountPath: "/mnt/flux"},
			corev1.VolumeMount{Name: "spack-install", MountPath: "/opt/software"},
			corev1.VolumeMount{Name: "lammps-flux-flux-entrypoint", MountPath: "/etc/flux-config", ReadOnly: true},
			corev1.VolumeMount{Name: "flux-curve", MountPath: "/curve", ReadOnly: true},
			corev1.VolumeMount{Name: "shared-memory", MountPath: "/dev/shm"},
		))
		pod := rj.Template.Spec.Template.Spec
		Expect(pod.InitContainers).To(HaveLen(1))
		installer := pod.InitContainers[0]
		Expect(installer.Name).To(Equal("flux-installer"))
		Expect(installer.Image).To(Equal("ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"))
		Expect(installer.Command).To(Equal([]string{"/bin/bash", "/etc/flux-config/init.sh"}))
		Expect(installer.VolumeMounts).To(HaveExactElements(
			corev1.VolumeMount{Name: "flux-install", MountPath: "/mnt/flux"},
			corev1.VolumeMount{Name: "lammps-flux-flux-entrypoint", MountPath: "/etc/flux-config", ReadOnly: true},
		))
		Expect(pod.Volumes).To(HaveExactElements(
			corev1.Volume{Name: "spack-install", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			corev1.Volume{Name: "flux-install", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			corev1.Volume{Name: "lammps-flux-flux-entrypoint", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "lammps-flux-flux-entrypoint"}, DefaultMode: ptr.To[int32](0o755),
			}}},
			corev1.Volume{Name: "shared-memory", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
			corev1.Volume{Name: "flux-curve", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "lammps-flux-flux-curve", DefaultMode: ptr.To[int32](0o400),
			}}},
		))

		By("the ConfigMap: the brokers of both pods, reached in the TrainJob's namespace, and flux run on 2 nodes × 4 tasks")
		Expect(cm.Data).To(HaveKey("entrypoint.sh"))
		Expect(cm.Data).To(HaveKey("init.sh"))
		Expect(cm.Data["init.sh"]).To(ContainSubstring("echo 'lammps-flux-node-0-[0-1]' > "))
		Expect(cm.Data["init.sh"]).To(ContainSubstring("default_connect = 'tcp://%h.lammps-flux." + job.Namespace + ".svc.cluster.local:%p'\n"))
		Expect(cm.Data["entrypoint.sh"]).To(ContainSubstring(`if [ "$(hostname)" = "lammps-flux-node-0-0" ]; then`))
		Expect(cm.Data["entrypoint.sh"]).To(ContainSubstring("flux run -N 2 -n 8 $command\n"))
		ownedBy(cm, job)

		By("the Secret: the CURVE certificate of this TrainJob")
		Expect(secret.Data).To(HaveLen(1))
		Expect(string(secret.Data["curve.cert"])).To(MatchRegexp(
			`(?s)^#  ZeroMQ CURVE Secret Certificate\n.*\nmetadata\n    name = "lammps-flux"\ncurve\n    public-key = "[^"]{40}"\n    secret-key = "[^"]{40}"\n$`))
		ownedBy(secret, job)
	})

	It("keep a TrainJob's CURVE certificate through reconciles, and give another TrainJob of the same name another", func() {
		job := lammps("curve")
		Expect(h.client.Create(ctx, job)).To(Succeed())
		_, _, first := built(job)

		By("suspending the TrainJob, which reconciles and applies its objects again")
		patch := client.MergeFrom(job.DeepCopy())
		job.Spec.Suspend = ptr.To(true)
		Expect(h.client.Patch(ctx, job, patch)).To(Succeed())
		Eventually(func(g Gomega) *bool {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(h.client.Get(ctx, client.ObjectKeyFromObject(job), js)).To(Succeed())
			return js.Spec.Suspend
		}).Should(Equal(ptr.To(true)))
		now := &corev1.Secret{}
		Expect(h.client.Get(ctx, client.ObjectKeyFromObject(first), now)).To(Succeed())
		Expect(now.Data).To(Equal(first.Data), "the key changed")
		Expect(now.ResourceVersion).To(Equal(first.ResourceVersion), "applying the same Secret again wrote it")

		By("deleting the TrainJob and creating it again: a new UID, a new key")
		Expect(h.client.Delete(ctx, job)).To(Succeed())
		Eventually(func() error { return h.client.Get(ctx, client.ObjectKeyFromObject(job), &trainer.TrainJob{}) }).Should(MatchError(ContainSubstring("not found")))
		// envtest runs no garbage collector: delete what it would.
		Expect(h.client.Delete(ctx, first)).To(Succeed())
		Expect(h.client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name + "-flux-entrypoint"}})).To(Succeed())
		again := trainJob(job.Namespace, job.Name, "flux-distributed")
		again.Spec.Trainer = job.Spec.Trainer.DeepCopy()
		again.Spec.Suspend = nil
		Expect(h.client.Create(ctx, again)).To(Succeed())
		_, _, second := built(again)
		Expect(second.UID).NotTo(Equal(first.UID))
		Expect(second.Data["curve.cert"]).NotTo(Equal(first.Data["curve.cert"]), "a TrainJob created again got its predecessor's key")
	})

	It("reject at admission, through the plugin's process, tasks that cannot share a node's GPUs and an unknown queue policy", func() {
		job := lammps("split")
		job.Spec.Trainer.NumProcPerNode = ptr.To(intstr.FromInt32(3))
		job.Spec.Trainer.ResourcesPerNode = &corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}
		job.Spec.Trainer.Env = append(job.Spec.Trainer.Env, corev1.EnvVar{Name: "FLUX_QUEUE_POLICY", Value: "lifo"})
		err := h.client.Create(ctx, job)
		Expect(err).To(MatchError(ContainSubstring("spec.trainer.numProcPerNode: Invalid value: 3: must divide the 4 GPUs of a node, so that every Flux task gets the same number of GPUs (flux run -g)")))
		Expect(err).To(MatchError(ContainSubstring(`spec.trainer.env[1]: Invalid value: "lifo": FLUX_QUEUE_POLICY must be one of Fluxion's queue policies: fcfs, easy, hybrid, conservative`)))

		job.Spec.Trainer.NumProcPerNode = ptr.To(intstr.FromInt32(2))
		job.Spec.Trainer.Env = job.Spec.Trainer.Env[:1]
		Expect(h.client.Create(ctx, job)).To(Succeed())
	})
})

// ownedBy checks the labels and the owner the host gives every object it
// builds for a TrainJob.
func ownedBy(obj client.Object, job *trainer.TrainJob) {
	GinkgoHelper()
	Expect(obj.GetLabels()).To(HaveKeyWithValue(framework.ManagedByLabel, framework.ManagedByValue))
	Expect(obj.GetLabels()).To(HaveKeyWithValue(framework.TrainJobNameLabel, job.Name))
	owner := controllerOwner(obj)
	Expect(owner).NotTo(BeNil(), "%s has no controller owner", obj.GetName())
	Expect(*owner).To(HaveField("Kind", trainer.TrainJobKind))
	Expect(*owner).To(HaveField("UID", job.UID))
}
