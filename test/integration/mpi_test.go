package integration

import (
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// The MPI plugin, run by the real controller as a real process
// (vendor_harness_test.go) in a cluster of its own: the controller is
// killed and restarted here, which the other vendor specs must not see.

// mpiRuntime is a TrainingRuntime of one of two shapes. launcherAsNode:
// Kubeflow Trainer's deepspeed-distributed (and mlx-distributed), the
// workers "node" first, then the launcher, which is a node too, numNodes 1
// for the TrainJob to raise. Otherwise the launcher comes first, only runs
// mpirun on one CPU, and the runtime's two workers ask for 2 GPUs each;
// every mlPolicy.mpi field but the implementation is left to its default.
func mpiRuntime(ns, name, implementation string, launcherAsNode bool) *trainer.TrainingRuntime {
	worker := replicatedJobOf("node", "", "node")
	worker.Template.Labels = nil
	sshd := &worker.Template.Spec.Template.Spec.Containers[0]
	sshd.Image, sshd.Command, sshd.Resources = "example.com/mpi-runtime:v1", []string{"/usr/sbin/sshd", "-De"}, corev1.ResourceRequirements{}
	launcher := replicatedJobOf("launcher", trainer.TrainerStep, "node")
	launcher.Template.Spec.Template.Spec.Containers[0].Image = "example.com/mpi-runtime:v1"
	mpi := &trainer.MPIMLPolicySource{MPIImplementation: ptr.To(implementation)}
	rt := &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	rt.Spec.Template.Spec.SuccessPolicy = &jobsetv1alpha2.SuccessPolicy{Operator: jobsetv1alpha2.OperatorAll, TargetReplicatedJobs: []string{"launcher"}}
	if launcherAsNode {
		mpi.NumProcPerNode, mpi.SSHAuthMountPath, mpi.RunLauncherAsNode = ptr.To[int32](1), ptr.To("/home/mpiuser/.ssh"), ptr.To(true)
		rt.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainer.MLPolicySource{MPI: mpi}}
		rt.Spec.Template.Spec.Network = &jobsetv1alpha2.Network{PublishNotReadyAddresses: ptr.To(true)}
		launcher.DependsOn = []jobsetv1alpha2.DependsOn{{Name: "node", Status: jobsetv1alpha2.DependencyReady}}
		rt.Spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{worker, launcher}
	} else {
		sshd.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}
		rt.Spec.MLPolicy = &trainer.MLPolicy{NumNodes: ptr.To[int32](2), MLPolicySource: trainer.MLPolicySource{MPI: mpi}}
		rt.Spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{launcher, worker}
	}
	return rt
}

// launcherVars are the launcher's variables of each implementation for
// the given number of slots.
func launcherVars(implementation string, slots int) []corev1.EnvVar {
	n := strconv.Itoa(slots)
	retry := "-o ConnectionAttempts=10"
	switch implementation {
	case "OpenMPI":
		return []corev1.EnvVar{
			{Name: "OMPI_MCA_orte_default_hostfile", Value: "/etc/mpi/hostfile"},
			{Name: "OMPI_MCA_orte_keep_fqdn_hostnames", Value: "true"},
			{Name: "OMPI_MCA_orte_set_default_slots", Value: n},
			{Name: "OMPI_MCA_plm_rsh_args", Value: retry},
		}
	case "Intel":
		return []corev1.EnvVar{
			{Name: "I_MPI_HYDRA_HOST_FILE", Value: "/etc/mpi/hostfile"},
			{Name: "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", Value: retry},
			{Name: "I_MPI_PERHOST", Value: n},
		}
	case "MPICH":
		return []corev1.EnvVar{{Name: "HYDRA_HOST_FILE", Value: "/etc/mpi/hostfile"}, {Name: "HYDRA_LAUNCH_EXTRA_ARGS", Value: retry}}
	}
	Fail("no implementation " + implementation)
	return nil
}

// hostfileLines are the hostfile of pods, each with its slots, in the
// implementation's format.
func hostfileLines(implementation string, slots int, pods ...string) string {
	var out string
	for _, p := range pods {
		if implementation == "OpenMPI" {
			out += p + " slots=" + strconv.Itoa(slots) + "\n"
		} else {
			out += p + ":" + strconv.Itoa(slots) + "\n"
		}
	}
	return out
}

func sshAuthVolume(job string) corev1.Volume {
	return corev1.Volume{Name: "mpi-ssh-auth", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  job + "-mpi-ssh-auth",
		DefaultMode: ptr.To[int32](0o400),
		Items: []corev1.KeyToPath{
			{Key: "ssh-privatekey", Path: "id_rsa", Mode: ptr.To[int32](0o640)},
			{Key: "ssh-publickey", Path: "id_rsa.pub", Mode: ptr.To[int32](0o644)},
			{Key: "ssh-publickey", Path: "authorized_keys", Mode: ptr.To[int32](0o644)},
		},
	}}}
}

func hostfileVolume(job string) corev1.Volume {
	return corev1.Volume{Name: "mpi-hostfile", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: job + "-mpi-hostfile"},
		Items:                []corev1.KeyToPath{{Key: "hostfile", Path: "hostfile", Mode: ptr.To[int32](0o444)}},
	}}}
}

var _ = Describe("the MPI plugin, run as a process by the trainforge-controller binary", Ordered, func() {
	var h *vendorHarness
	BeforeAll(func() { h = startVendorHarness() })

	// built returns what the controller built for a TrainJob: its JobSet,
	// SSH key Secret and hostfile ConfigMap, once all three exist.
	built := func(job *trainer.TrainJob) (*jobsetv1alpha2.JobSet, *corev1.Secret, *corev1.ConfigMap) {
		js, secret, cm := &jobsetv1alpha2.JobSet{}, &corev1.Secret{}, &corev1.ConfigMap{}
		key := func(name string) types.NamespacedName {
			return types.NamespacedName{Namespace: job.Namespace, Name: name}
		}
		Eventually(func(g Gomega) {
			g.Expect(h.client.Get(ctx, key(job.Name), js)).To(Succeed())
			g.Expect(h.client.Get(ctx, key(job.Name+"-mpi-ssh-auth"), secret)).To(Succeed())
			g.Expect(h.client.Get(ctx, key(job.Name+"-mpi-hostfile"), cm)).To(Succeed())
		}).Should(Succeed(), func() string { return "TrainJob " + job.Name + ": " + h.conditions(key(job.Name)) })
		return js, secret, cm
	}

	// ownedByJob checks the labels and the owner the host gives every
	// object it builds for the TrainJob.
	ownedByJob := func(obj client.Object, job *trainer.TrainJob) {
		Expect(obj.GetLabels()).To(HaveKeyWithValue(framework.ManagedByLabel, framework.ManagedByValue))
		Expect(obj.GetLabels()).To(HaveKeyWithValue(framework.TrainJobNameLabel, job.Name))
		owner := controllerOwner(obj)
		Expect(owner).NotTo(BeNil(), "%s has no controller owner", obj.GetName())
		Expect(*owner).To(HaveField("Kind", trainer.TrainJobKind))
		Expect(*owner).To(HaveField("Name", job.Name))
		Expect(*owner).To(HaveField("UID", job.UID))
	}

	DescribeTable("give a TrainJob a launcher and workers that reach each other over SSH, and a hostfile",
		func(implementation string, launcherAsNode bool) {
			ns := h.newNamespace()
			Expect(h.client.Create(ctx, mpiRuntime(ns, "mpi", implementation, launcherAsNode))).To(Succeed())
			job := trainJob(ns, "ds", "mpi")
			job.Spec.Trainer = &trainer.Trainer{
				Image:            ptr.To("example.com/mpi-app:v2"),
				Env:              []corev1.EnvVar{{Name: "NCCL_DEBUG", Value: "INFO"}},
				ResourcesPerNode: &corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}},
			}
			// Three nodes: the launcher and two workers, or three workers.
			job.Spec.Trainer.NumNodes = ptr.To[int32](3)
			workers, sshPath := 3, "/root/.ssh"
			pods := []string{"ds-node-0-0.ds", "ds-node-0-1.ds", "ds-node-0-2.ds"}
			if launcherAsNode {
				workers, sshPath = 2, "/home/mpiuser/.ssh"
				pods = []string{"ds-node-0-0.ds", "ds-node-0-1.ds", "ds-launcher-0-0.ds"}
			}
			Expect(h.client.Create(ctx, job)).To(Succeed())
			js, secret, cm := built(job)

			By("the JobSet: one launcher pod, the workers, their env, resources, volumes and mounts")
			launcherJob, workerJob := replicatedJob(js, "launcher"), replicatedJob(js, "node")
			Expect(launcherJob).NotTo(BeNil())
			Expect(workerJob).NotTo(BeNil())
			Expect(launcherJob.Replicas).To(Equal(int32(1)))
			Expect(launcherJob.Template.Spec.Parallelism).To(Equal(ptr.To[int32](1)))
			Expect(launcherJob.Template.Spec.Completions).To(Equal(ptr.To[int32](1)))
			Expect(workerJob.Replicas).To(Equal(int32(1)))
			Expect(workerJob.Template.Spec.Parallelism).To(Equal(ptr.To(int32(workers))))
			Expect(workerJob.Template.Spec.Completions).To(Equal(ptr.To(int32(workers))))

			gpus4 := corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}
			launcherC, workerC := container(js, "launcher", "node"), container(js, "node", "node")
			Expect(launcherC.Image).To(Equal("example.com/mpi-app:v2"))
			Expect(launcherC.Env).To(HaveExactElements(append([]corev1.EnvVar{{Name: "NCCL_DEBUG", Value: "INFO"}}, launcherVars(implementation, 4)...)))
			Expect(launcherC.VolumeMounts).To(HaveExactElements(
				corev1.VolumeMount{Name: "mpi-ssh-auth", MountPath: sshPath},
				corev1.VolumeMount{Name: "mpi-hostfile", MountPath: "/etc/mpi"},
			))
			Expect(launcherJob.Template.Spec.Template.Spec.Volumes).To(HaveExactElements(sshAuthVolume("ds"), hostfileVolume("ds")))
			if launcherAsNode {
				Expect(launcherC.Resources).To(Equal(gpus4))
			} else {
				Expect(launcherC.Resources).To(Equal(corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}),
					"a launcher apart keeps the runtime's resources")
			}
			Expect(workerC.Image).To(Equal("example.com/mpi-runtime:v1"))
			Expect(workerC.Command).To(Equal([]string{"/usr/sbin/sshd", "-De"}))
			Expect(workerC.Env).To(HaveExactElements(corev1.EnvVar{Name: "NCCL_DEBUG", Value: "INFO"}))
			Expect(workerC.Resources).To(Equal(gpus4))
			Expect(workerC.VolumeMounts).To(HaveExactElements(corev1.VolumeMount{Name: "mpi-ssh-auth", MountPath: sshPath}))
			Expect(workerJob.Template.Spec.Template.Spec.Volumes).To(HaveExactElements(sshAuthVolume("ds")))

			By("the Secret: an immutable SSH key pair owned by the TrainJob")
			Expect(h.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: job.Name}, job)).To(Succeed())
			Expect(secret.Type).To(Equal(corev1.SecretTypeSSHAuth))
			Expect(secret.Immutable).To(Equal(ptr.To(true)))
			Expect(secret.Data).To(HaveLen(2))
			Expect(string(secret.Data["ssh-privatekey"])).To(HavePrefix("-----BEGIN EC PRIVATE KEY-----\n"))
			Expect(string(secret.Data["ssh-publickey"])).To(HavePrefix("ecdsa-sha2-nistp521 "))
			ownedByJob(secret, job)

			By("the ConfigMap: a hostfile line per node, in the runtime's order")
			Expect(cm.Data).To(Equal(map[string]string{"hostfile": hostfileLines(implementation, 4, pods...)}))
			ownedByJob(cm, job)
		},
		Entry("OpenMPI, the launcher a node (deepspeed-distributed)", "OpenMPI", true),
		Entry("Intel MPI, the launcher a node", "Intel", true),
		Entry("MPICH, the launcher a node", "MPICH", true),
		Entry("OpenMPI, the launcher apart", "OpenMPI", false),
		Entry("Intel MPI, the launcher apart", "Intel", false),
		Entry("MPICH, the launcher apart", "MPICH", false),
	)

	It("keep the SSH key when the controller is killed and restarted, and when the TrainJob is suspended and resumed", func() {
		ns := h.newNamespace()
		Expect(h.client.Create(ctx, mpiRuntime(ns, "mpi", "OpenMPI", false))).To(Succeed())
		job := trainJob(ns, "keep", "mpi")
		Expect(h.client.Create(ctx, job)).To(Succeed())
		_, first, _ := built(job)
		secretKey := client.ObjectKeyFromObject(first)
		unchanged := func() {
			now := &corev1.Secret{}
			Expect(h.client.Get(ctx, secretKey, now)).To(Succeed())
			Expect(now.UID).To(Equal(first.UID), "the Secret was replaced")
			Expect(now.ResourceVersion).To(Equal(first.ResourceVersion), "the Secret was written again")
			Expect(now.Data).To(Equal(first.Data), "the key changed")
		}
		// How many times the running controller built the Secret again and
		// left the one it found, as it must.
		sample := func(g Gomega) string {
			return h.proc.metric("trainforge_object_applies_total", `kind="Secret"`, `plugin="MPI"`, `result="exists"`)(g)
		}

		By("killing the controller with SIGKILL and starting it again")
		h.restartController()
		Eventually(sample).ShouldNot(BeEmpty(), "the restarted controller did not build %s's Secret again", job.Name)
		unchanged()

		By("suspending the TrainJob")
		before := sample(Default)
		patch := client.MergeFrom(job.DeepCopy())
		job.Spec.Suspend = ptr.To(true)
		Expect(h.client.Patch(ctx, job, patch)).To(Succeed())
		Eventually(func(g Gomega) *bool {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(h.client.Get(ctx, client.ObjectKeyFromObject(job), js)).To(Succeed())
			return js.Spec.Suspend
		}).Should(Equal(ptr.To(true)))
		unchanged()

		By("resuming it")
		patch = client.MergeFrom(job.DeepCopy())
		job.Spec.Suspend = ptr.To(false)
		Expect(h.client.Patch(ctx, job, patch)).To(Succeed())
		Eventually(func(g Gomega) *bool {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(h.client.Get(ctx, client.ObjectKeyFromObject(job), js)).To(Succeed())
			return js.Spec.Suspend
		}).Should(Equal(ptr.To(false)))
		Expect(sample(Default)).NotTo(Equal(before), "no reconcile built the Secret again while the TrainJob was suspended and resumed")
		unchanged()
	})

	It("admit deepspeed-distributed's numNodes 1, and reject a TrainJob that would run the launcher as its only node", func() {
		ns := h.newNamespace()
		Expect(h.client.Create(ctx, mpiRuntime(ns, "deepspeed-distributed", "OpenMPI", true))).To(Succeed())
		job := trainJob(ns, "alone", "deepspeed-distributed")
		Expect(h.client.Create(ctx, job)).To(MatchError(ContainSubstring(
			`spec.trainer.numNodes: Invalid value: 1: must be at least 2: the runtime runs the MPI launcher as a node (mlPolicy.mpi.runLauncherAsNode)`)))
		job.Spec.Trainer = &trainer.Trainer{NumNodes: ptr.To[int32](2)}
		Expect(h.client.Create(ctx, job)).To(Succeed())
	})

	It("reject at admission a runtime whose MPI implementation the plugin does not support", func() {
		ns := h.newNamespace()
		Expect(h.client.Create(ctx, mpiRuntime(ns, "mvapich", "MVAPICH", false))).To(MatchError(ContainSubstring(
			`spec.mlPolicy.mpi.mpiImplementation: Unsupported value: "MVAPICH": supported values: "OpenMPI", "Intel", "MPICH"`)))
	})
})
