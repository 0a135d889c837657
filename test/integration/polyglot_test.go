package integration

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/yaml"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// DeepSpeed, a plugin in Python, and Volcano, a vendor gang scheduler, run
// as processes of the real controller from its configuration file
// (vendor_harness_test.go), checked through what reaches the cluster.
var _ = Describe("DeepSpeed in Python and Volcano, run as processes by the trainforge-controller binary", Ordered, func() {
	var h *vendorHarness
	BeforeAll(func() { h = startVendorHarness() })

	get := func(ns, name string, obj client.Object) func() error {
		return func() error { return h.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj) }
	}

	ownedBy := func(obj client.Object, job *trainer.TrainJob) {
		Expect(obj.GetLabels()).To(HaveKeyWithValue(framework.ManagedByLabel, framework.ManagedByValue))
		Expect(obj.GetLabels()).To(HaveKeyWithValue(framework.TrainJobNameLabel, job.Name))
		owner := controllerOwner(obj)
		Expect(owner).NotTo(BeNil(), "%s has no controller owner", obj.GetName())
		Expect(*owner).To(And(HaveField("Kind", trainer.TrainJobKind), HaveField("Name", job.Name)))
	}

	deepSpeedRuntime := func(ns, policy string) *trainer.TrainingRuntime {
		rt := vendorRuntime(ns, "deepspeed-distributed", "deepspeed", policy, "ghcr.io/example/deepspeed:0.16")
		c := &rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0]
		c.Command = []string{"deepspeed"}
		c.Args = []string{"--no_ssh", "--node_rank=$(NODE_RANK)", "--master_addr=$(MASTER_ADDR)", "--master_port=$(MASTER_PORT)", "/workspace/train.py"}
		return rt
	}

	It("give a DeepSpeed TrainJob a launcher with DeepSpeed's environment and a hostfile of its pods, from mlPolicy.deepspeed", func() {
		requirePluginRuns("DeepSpeed")
		ns := h.newNamespace()
		job := trainJob(ns, "bert", "deepspeed-distributed")
		job.Spec.Trainer = &trainer.Trainer{
			NumNodes:         ptr.To[int32](2),
			ResourcesPerNode: &corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}},
			Env:              []corev1.EnvVar{{Name: "LEARNING_RATE", Value: "0.0001"}},
		}
		js := h.jobSetFor(deepSpeedRuntime(ns, `{"masterPort": 23456, "nccl": {"debug": "INFO", "ibDisable": true}}`), job)

		rj, c := trainerOf(js)
		Expect(rj.Template.Spec.Parallelism).To(Equal(ptr.To[int32](2)))
		Expect(rj.Template.Spec.Completions).To(Equal(ptr.To[int32](2)))
		Expect(c.Command).To(Equal([]string{"deepspeed"}))
		Expect(c.Env).To(HaveExactElements(
			corev1.EnvVar{Name: "LEARNING_RATE", Value: "0.0001"},
			corev1.EnvVar{Name: "DS_HOSTFILE", Value: "/job/hostfile"},
			completionIndex("NODE_RANK"),
			corev1.EnvVar{Name: "MASTER_ADDR", Value: "bert-node-0-0.bert"},
			corev1.EnvVar{Name: "MASTER_PORT", Value: "23456"},
			corev1.EnvVar{Name: "NCCL_DEBUG", Value: "INFO"},
			corev1.EnvVar{Name: "NCCL_IB_DISABLE", Value: "1"},
		))
		Expect(c.Ports).To(HaveExactElements(corev1.ContainerPort{ContainerPort: 23456, Protocol: corev1.ProtocolTCP}))
		Expect(c.VolumeMounts).To(HaveExactElements(corev1.VolumeMount{Name: "deepspeed-hostfile", MountPath: "/job/hostfile", SubPath: "hostfile", ReadOnly: true}))
		Expect(rj.Template.Spec.Template.Spec.Volumes).To(HaveExactElements(corev1.Volume{Name: "deepspeed-hostfile", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "bert-deepspeed-hostfile"}},
		}}))

		cm := &corev1.ConfigMap{}
		Eventually(get(ns, "bert-deepspeed-hostfile", cm)).Should(Succeed())
		Expect(cm.Data).To(Equal(map[string]string{"hostfile": "bert-node-0-0.bert slots=4\nbert-node-0-1.bert slots=4\n"}))
		ownedBy(cm, job)
	})

	It("reject at admission, through the Python process, a DeepSpeed TrainJob or runtime with a field the plugin refuses, naming it", func() {
		requirePluginRuns("DeepSpeed")
		ns := h.newNamespace()
		bad := deepSpeedRuntime(ns, `{"nccl": {"debug": "LOUD"}}`)
		Expect(h.client.Create(ctx, bad)).To(MatchError(ContainSubstring(
			`spec.mlPolicy.deepspeed.nccl.debug: Unsupported value: "LOUD": supported values: VERSION, WARN, INFO, ABORT, TRACE`)))

		Expect(h.client.Create(ctx, deepSpeedRuntime(ns, "{}"))).To(Succeed())
		job := trainJob(ns, "clash", "deepspeed-distributed")
		job.Spec.Trainer = &trainer.Trainer{Env: []corev1.EnvVar{{Name: "MINE", Value: "1"}, {Name: "MASTER_ADDR", Value: "elsewhere"}}}
		Expect(h.client.Create(ctx, job)).To(MatchError(ContainSubstring(
			"spec.trainer.env[1].name: Forbidden: MASTER_ADDR is set by the DeepSpeed plugin, which sets DS_HOSTFILE, NODE_RANK, MASTER_ADDR, MASTER_PORT itself; remove it from spec.trainer.env")))
		job.Spec.Trainer.Env = job.Spec.Trainer.Env[:1]
		Expect(h.client.Create(ctx, job)).To(Succeed())
	})

	// volcanoRuntime has a dataset initializer and a trainer step, whose
	// pods name a priority class; the runtime names the queue and asks for
	// a network topology.
	volcanoRuntime := func(ns string) *trainer.TrainingRuntime {
		initializer := replicatedJobOf("dataset-initializer", trainer.DatasetInitializerStep, framework.DatasetInitializerContainer)
		node := replicatedJobOf(trainer.TrainerContainerName, trainer.TrainerStep, trainer.TrainerContainerName)
		node.Template.Spec.Template.Spec.PriorityClassName = "high-priority"
		rt := &trainer.TrainingRuntime{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "volcano"},
			Spec: trainer.TrainingRuntimeSpec{
				MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1)},
				PodGroupPolicy: &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{Volcano: &trainer.VolcanoPodGroupPolicySource{
					NetworkTopology: &apiextensionsv1.JSON{Raw: []byte(`{"mode": "soft", "highestTierAllowed": 2}`)},
				}}},
			},
		}
		rt.Spec.Template.ObjectMeta.Annotations = map[string]string{volcanov1beta1.QueueNameAnnotationKey: "research"}
		rt.Spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{initializer, node}
		return rt
	}

	podGroupOf := func(ns, name string) *volcanov1beta1.PodGroup {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(volcanov1beta1.SchemeGroupVersion.WithKind("PodGroup"))
		Eventually(get(ns, name, u)).Should(Succeed(), func() string {
			return "no PodGroup " + name + "; the TrainJob's conditions: " + h.conditions(types.NamespacedName{Namespace: ns, Name: name})
		})
		pg := &volcanov1beta1.PodGroup{}
		Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pg)).To(Succeed())
		return pg
	}

	It("give a TrainJob on Volcano a PodGroup for its trainer step and the group annotation on the trainers' pods only", func() {
		ns := h.newNamespace()
		job := trainJob(ns, "llm", "volcano")
		job.Spec.Trainer = &trainer.Trainer{
			NumNodes:         ptr.To[int32](3),
			ResourcesPerNode: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}},
		}
		js := h.jobSetFor(volcanoRuntime(ns), job)

		pg := podGroupOf(ns, "llm")
		Expect(pg.Spec.MinMember).To(Equal(int32(3)), "the trainer step's pods; the initializer is not in the gang")
		Expect(pg.Spec.MinResources).NotTo(BeNil())
		Expect(*pg.Spec.MinResources).To(HaveLen(2))
		Expect((*pg.Spec.MinResources)[corev1.ResourceCPU]).To(BeComparableTo(resource.MustParse("6")))
		Expect((*pg.Spec.MinResources)[corev1.ResourceMemory]).To(BeComparableTo(resource.MustParse("12Gi")))
		Expect(pg.Spec.Queue).To(Equal("research"))
		Expect(pg.Spec.PriorityClassName).To(Equal("high-priority"))
		Expect(pg.Spec.NetworkTopology).To(Equal(&volcanov1beta1.NetworkTopologySpec{Mode: volcanov1beta1.SoftNetworkTopologyMode, HighestTierAllowed: ptr.To(2)}))
		ownedBy(pg, job)

		node := replicatedJob(js, trainer.TrainerContainerName)
		Expect(node.Template.Spec.Template.Annotations).To(HaveKeyWithValue(volcanov1beta1.KubeGroupNameAnnotationKey, "llm"))
		initializer := replicatedJob(js, "dataset-initializer")
		Expect(initializer.Template.Spec.Template.Annotations).NotTo(HaveKey(volcanov1beta1.KubeGroupNameAnnotationKey))
	})

	It("let a TrainJob choose its Volcano queue, and leave the queue to Volcano's default without one", func() {
		ns := h.newNamespace()
		rt := volcanoRuntime(ns)
		rt.Spec.Template.ObjectMeta.Annotations = nil
		Expect(h.client.Create(ctx, rt)).To(Succeed())
		urgent := trainJob(ns, "urgent", "volcano")
		urgent.Spec.Annotations = map[string]string{volcanov1beta1.QueueNameAnnotationKey: "urgent"}
		Expect(h.client.Create(ctx, urgent)).To(Succeed())
		Expect(h.client.Create(ctx, trainJob(ns, "plain", "volcano"))).To(Succeed())

		Expect(podGroupOf(ns, "urgent").Spec.Queue).To(Equal("urgent"))
		Expect(podGroupOf(ns, "plain").Spec.Queue).To(Equal("default"), "the CRD that make generate writes defaults the queue")
	})

	It("reject at admission, through the Volcano process, a network topology or a queue it refuses, naming the field", func() {
		ns := h.newNamespace()
		rt := volcanoRuntime(ns)
		rt.Spec.PodGroupPolicy.Volcano.NetworkTopology.Raw = []byte(`{"mode": "strict"}`)
		Expect(h.client.Create(ctx, rt)).To(MatchError(ContainSubstring(
			`spec.podGroupPolicy.volcano.networkTopology.mode: Unsupported value: "strict": supported values: "hard", "soft"`)))

		Expect(h.client.Create(ctx, volcanoRuntime(ns))).To(Succeed())
		job := trainJob(ns, "nowhere", "volcano")
		job.Spec.Annotations = map[string]string{volcanov1beta1.QueueNameAnnotationKey: ""}
		Expect(h.client.Create(ctx, job)).To(MatchError(ContainSubstring(
			`spec.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "": the Volcano queue name must not be empty`)))
	})

	It("give the controller what Volcano needs with the RBAC of the plugin's documentation, and no more than that", func() {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: h.newNamespace(), Name: "trainforge-controller"}}
		Expect(h.client.Create(ctx, sa)).To(Succeed())
		user := "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
		allowed := func(verb string) bool {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{"system:serviceaccounts"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: volcanov1beta1.GroupName, Version: "v1beta1", Resource: "podgroups"},
			}}
			Expect(h.client.Create(ctx, review)).To(Succeed())
			return review.Status.Allowed
		}
		// The verbs the controller checks before it watches a kind a plugin
		// builds (internal/controller's buildVerbs).
		verbs := []string{"get", "list", "watch", "create", "patch"}
		for _, verb := range verbs {
			Expect(allowed(verb)).To(BeFalse(), "the service account may %s PodGroups before the role is bound", verb)
		}

		for _, obj := range documentedRBAC(filepath.Join(repoRoot, "plugins", "volcano", "doc.go")) {
			if b, ok := obj.(*rbacv1.ClusterRoleBinding); ok {
				b.Subjects[0].Namespace = sa.Namespace // the documentation's is trainforge-system
			}
			Expect(h.client.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(h.client.Delete(ctx, obj))).To(Succeed()) })
		}
		Eventually(func() []string {
			var denied []string
			for _, verb := range verbs {
				if !allowed(verb) {
					denied = append(denied, verb)
				}
			}
			return denied
		}).Should(BeEmpty())
		for _, verb := range []string{"update", "delete"} {
			Expect(allowed(verb)).To(BeFalse(), "the role grants %s, which the controller does not use on PodGroups", verb)
		}
	})
})

// documentedRBAC returns the RBAC objects of a package documentation's
// "# RBAC" section: its indented YAML block, documents separated by "---".
func documentedRBAC(docFile string) []client.Object {
	data, err := os.ReadFile(docFile)
	Expect(err).NotTo(HaveOccurred())
	var block bytes.Buffer
	inSection := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "// # "):
			inSection = line == "// # RBAC"
		case inSection && strings.HasPrefix(line, "//\t"):
			block.WriteString(strings.TrimPrefix(line, "//\t") + "\n")
		}
	}
	Expect(block.Len()).NotTo(BeZero(), "%s has no YAML block in a section # RBAC", docFile)
	var out []client.Object
	reader := utilyaml.NewYAMLReader(bufio.NewReader(&block))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		Expect(err).NotTo(HaveOccurred())
		var meta metav1.TypeMeta
		Expect(yaml.Unmarshal(doc, &meta)).To(Succeed())
		var obj client.Object
		switch meta.Kind {
		case "ClusterRole":
			obj = &rbacv1.ClusterRole{}
		case "ClusterRoleBinding":
			obj = &rbacv1.ClusterRoleBinding{}
		default:
			Fail("unexpected kind " + meta.Kind + " in the RBAC of " + docFile)
		}
		Expect(yaml.UnmarshalStrict(doc, obj)).To(Succeed())
		out = append(out, obj)
	}
	Expect(out).To(HaveLen(2), "a ClusterRole and its ClusterRoleBinding")
	return out
}
