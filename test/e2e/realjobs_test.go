package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
	"github.com/trainforge/trainforge/hack/simcluster/procnode"
)

// The real-process specs: TrainJobs whose pods the process nodes of the
// simulated cluster run as processes on this machine, with Debian's
// python3-torch and python3-xgboost and the scripts of examples/realjobs.
// Nothing here plays a part: the Torch and XGBoost plugins' variables must
// form a working job, the TrainJobStatus plugin's token and CA must let the
// training loop report, and the restart policy must act on the exit code
// the process really ended with.

// installRealJobPackages is the one command that gives a machine what the
// real-process specs run.
const installRealJobPackages = "apt-get install python3-torch python3-xgboost"

// restartAttemptLabel is the JobSet's label of a pod's restart attempt.
const restartAttemptLabel = "jobset.sigs.k8s.io/restart-attempt"

// realJobScripts is the ConfigMap of examples/realjobs' scripts that the
// specs mount at /workspace, as the demo does.
const realJobScripts = "train-scripts"

var _ = Describe("real training processes on the process nodes", func() {
	var ns string
	var clientset *kubernetes.Clientset
	BeforeEach(func() { ns, clientset = prepareRealJobs() })

	It("trains a real DDP job on Kubeflow's torch-distributed runtime, unchanged, to Complete, reporting its progress from the training loop", func() {
		// The runtime exactly as Kubeflow Trainer v2.3 ships it: the
		// TrainJob alone chooses the process nodes and mounts the script.
		onKubeflowRuntime(ns, "ddp", "torch_distributed.yaml", &trainer.Trainer{
			NumNodes:       ptr.To[int32](2),
			NumProcPerNode: ptr.To(intstr.FromInt32(2)),
			// Debian 12's torch 1.13 on Python 3.11 crashes in torchrun
			// (elastic/multiprocessing/api.py to_map) unless --redirects
			// and --tee are 1 or 2. Here they are flags rather than
			// PET_REDIRECTS and PET_TEE: Trainforge refuses every PET_*
			// in spec.trainer.env (the Torch plugin's own), and the
			// defect is Debian's torch's, not the plugin's to work around.
			Command: []string{"torchrun", "--redirects=2", "--tee=1", "/workspace/train_ddp.py"},
			Args: []string{"--steps=60", "--checkpoint-every=20", "--report-every-seconds=1.5", "--require-report", "--expect-world-size=4",
				// The processes run on this machine's filesystem: a
				// directory of the spec's own is the checkpoint's.
				"--checkpoint-dir=" + GinkgoT().TempDir()},
		})

		By("Complete: the four ranks met through PET_MASTER_ADDR, trained and ended with the same parameters")
		expectRealState(clientset, ns, "ddp", trainer.TrainJobComplete)
		pods := podsOf(Default, ns, "ddp")
		Expect(pods).To(HaveLen(2))
		expectOnProcessNodes(pods)
		master := podOfRank(pods, "0", "0")
		logs := trainerLogs(clientset, master, false)
		Expect(logs).To(ContainSubstring("parameters identical on all 4 ranks"))
		losses := stepLosses(logs)
		Expect(len(losses)).To(BeNumerically(">=", 2), "rank 0's log:\n%s", logs)
		Expect(losses[len(losses)-1]).To(BeNumerically("<", losses[0]), "the loss falls: %v", losses)

		By("the training loop's reports in status.trainerStatus: 100%, no time left, the real loss")
		ts := getTrainJob(Default, ns, "ddp").Status.TrainerStatus
		Expect(ts).NotTo(BeNil())
		Expect(ptr.Deref(ts.ProgressPercentage, -1)).To(Equal(int32(100)))
		Expect(ptr.Deref(ts.EstimatedRemainingSeconds, -1)).To(Equal(int32(0)))
		Expect(ts.Metrics).To(ContainElement(trainer.Metric{Name: "step", Value: "60"}))
		loss := metricValue(ts.Metrics, "loss")
		Expect(loss).NotTo(BeEmpty())
		Expect(logs).To(ContainSubstring("step 60/60 loss " + loss))

		By("in the table kubectl get trainjobs prints")
		table := trainJobTable(clientset, ns)
		Expect(table.Rows).To(HaveLen(1))
		Expect(tableCell(table, 0, "Progress")).To(Equal(float64(100)))
		Expect(tableCell(table, 0, "Seconds Left")).To(Equal(float64(0)))

		By("in the controller's metrics")
		Eventually(func(g Gomega) string { return metricsOf(g, ns) }).Should(And(
			ContainSubstring(`trainforge_trainjob_progress_percent{namespace="`+ns+`",trainjob="ddp"} 100`),
			ContainSubstring(`trainforge_trainjob_reported_metric{metric="loss",namespace="`+ns+`",trainjob="ddp"} `+prometheusFloat(loss)),
		))
	})

	It("restarts once on a real exit code 134 and completes, resuming from the checkpoint", func() {
		processRuntime{restartPolicy: realRestartPolicy()}.create(ns, "flaky")
		realTrainJob(ns, "nccl", "flaky", 2, "--steps=30", "--checkpoint-every=10", "--fail-at-step=15", "--fail-exit-code=134", "--fail-on-attempt=0")

		job := expectRealState(clientset, ns, "nccl", trainer.TrainJobComplete)
		Expect(job.Status.Restarts).NotTo(BeNil())
		Expect(job.Status.Restarts.Count).To(Equal(int32(1)))
		Expect(job.Status.Restarts.LastReason).To(Equal(trainer.RestartRetryableExitCodeReason))

		By("the second attempt went on from the first one's last checkpoint")
		pods := podsOf(Default, ns, "nccl")
		master := podOfRank(pods, "0", "1")
		Expect(master).NotTo(BeNil(), "no pod of rank 0 on restart attempt 1 among %v", podNames(pods))
		Expect(trainerLogs(clientset, master, false)).To(And(
			ContainSubstring("restart attempt 1"),
			ContainSubstring("resumed from the checkpoint of step 10"),
			ContainSubstring("parameters identical on all 2 ranks"),
		))
	})

	It("fails the job on a real Python exception, whose traceback the pod's logs show", func() {
		processRuntime{restartPolicy: realRestartPolicy()}.create(ns, "buggy")
		realTrainJob(ns, "bug", "buggy", 1, "--steps=30", "--raise-at-step=5")

		job := expectRealState(clientset, ns, "bug", trainer.TrainJobFailed)
		failed := meta.FindStatusCondition(job.Status.Conditions, trainer.TrainJobFailed)
		Expect(failed.Reason).To(Equal(trainer.TrainJobFailedExitCodeReason), "conditions: %s", conditions(job))
		Expect(job.Status.Restarts).To(BeNil(), "exit code 1 fails the job without a restart")

		pods := podsOf(Default, ns, "bug")
		Expect(pods).To(HaveLen(1))
		Expect(exitCodeOf(&pods[0])).To(Equal(int32(1)))
		Expect(trainerLogs(clientset, &pods[0], false)).To(And(
			ContainSubstring("Traceback (most recent call last):"),
			ContainSubstring(`raise RuntimeError(f"a bug at step {step}`),
			ContainSubstring("RuntimeError: a bug at step 5"),
		))
	})

	It("trains a real XGBoost job through the XGBoost plugin, on Kubeflow's xgboost-distributed runtime, unchanged, to Complete", func() {
		onKubeflowRuntime(ns, "boost", "xgboost_distributed.yaml", &trainer.Trainer{
			NumNodes: ptr.To[int32](2),
			Command:  []string{"python3", "/workspace/train_xgboost.py"},
			// The workers wait for the tracker of task 0 for up to
			// about two minutes (2 s, 4 s, ... between tries) instead
			// of XGBoost's default 5 tries: on a busy machine pod 0
			// may start long after the others.
			Env: []corev1.EnvVar{{Name: "DMLC_WORKER_CONNECT_RETRY", Value: "10"}},
		})

		expectRealState(clientset, ns, "boost", trainer.TrainJobComplete)
		pods := podsOf(Default, ns, "boost")
		Expect(pods).To(HaveLen(2))
		expectOnProcessNodes(pods)
		for _, p := range pods {
			Expect(trainerLogs(clientset, &p, false)).To(ContainSubstring("the same model on all 2 workers"), "pod %s", p.Name)
		}
	})
})

// prepareRealJobs checks that the machine has the packages the real jobs
// run on, and returns a new namespace with the scripts' ConfigMap and a
// clientset (for pods' logs).
func prepareRealJobs() (string, *kubernetes.Clientset) {
	GinkgoHelper()
	// Missing packages fail the spec: a skip would let a machine without
	// them pass what it never ran.
	out, err := exec.Command("/usr/bin/python3", "-c", "import torch, xgboost").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "the real-process specs need Debian's PyTorch and XGBoost for /usr/bin/python3; install them with\n\n    %s\n\n%s", installRealJobPackages, out)
	ns := newNamespace()
	createScriptsConfigMap(ns)
	clientset, err := kubernetes.NewForConfig(cluster.Config)
	Expect(err).NotTo(HaveOccurred())
	return ns, clientset
}

// expectOnProcessNodes checks that pods ran on process nodes.
func expectOnProcessNodes(pods []corev1.Pod) {
	GinkgoHelper()
	for _, p := range pods {
		node := &corev1.Node{}
		Expect(k8s.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, node)).To(Succeed(), "pod %s", p.Name)
		Expect(node.Labels).To(HaveKeyWithValue(procnode.NodeLabel, "true"), "pod %s ran on %s", p.Name, node.Name)
	}
}

// onKubeflowRuntime applies one of Kubeflow Trainer v2.3's runtimes, its
// manifest as shipped (testdata/kubeflow), and creates a TrainJob of it
// whose runtime patch alone puts it on the process nodes with the scripts.
func onKubeflowRuntime(ns, name, manifest string, t *trainer.Trainer) {
	GinkgoHelper()
	objs, err := simcluster.ApplyFiles(ctx, k8s, "", filepath.Join(repoRoot, "test", "e2e", "testdata", "kubeflow", manifest))
	Expect(err).NotTo(HaveOccurred())
	Expect(objs).To(HaveLen(1))
	job := &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainJobSpec{
			RuntimeRef:     trainer.RuntimeRef{Name: objs[0].GetName()},
			Trainer:        t,
			RuntimePatches: []trainer.RuntimePatch{onProcessNodes()},
		},
	}
	Expect(k8s.Create(ctx, job)).To(Succeed())
}

// createScriptsConfigMap puts the scripts of examples/realjobs and the
// progress reporter they import into a ConfigMap of ns.
func createScriptsConfigMap(ns string) {
	GinkgoHelper()
	data := map[string]string{}
	for _, f := range []string{
		filepath.Join(repoRoot, "examples", "realjobs", "train_ddp.py"),
		filepath.Join(repoRoot, "examples", "realjobs", "train_xgboost.py"),
		filepath.Join(repoRoot, "examples", "progress", "report_progress.py"),
	} {
		b, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		data[filepath.Base(f)] = string(b)
	}
	Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: realJobScripts}, Data: data})).To(Succeed())
}

// onProcessNodes is a TrainJob's runtime patch that puts the trainer pods
// on the process nodes and mounts the scripts at /workspace: all a TrainJob
// needs to run a real process on a runtime made for a real cluster.
func onProcessNodes() trainer.RuntimePatch {
	GinkgoHelper()
	pod := map[string]any{
		"nodeSelector": map[string]string{procnode.NodeLabel: "true"},
		"tolerations":  []corev1.Toleration{procnode.Toleration},
		"volumes":      []corev1.Volume{scriptsVolume()},
		"containers":   []map[string]any{{"name": "node", "volumeMounts": []corev1.VolumeMount{scriptsMount()}}},
	}
	patch := map[string]any{"spec": map[string]any{"replicatedJobs": []any{map[string]any{
		"name": "node", "template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": pod}}},
	}}}}
	raw, err := json.Marshal(patch)
	Expect(err).NotTo(HaveOccurred())
	return trainer.RuntimePatch{Manager: "e2e.trainforge.dev/process-nodes", TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{
		Template: &apiextensionsv1.JSON{Raw: raw},
	}}
}

func scriptsVolume() corev1.Volume {
	return corev1.Volume{Name: "scripts", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: realJobScripts},
	}}}
}

func scriptsMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: "scripts", MountPath: "/workspace", ReadOnly: true}
}

// realRestartPolicy restarts the job once on 134 (an aborted process, as
// NCCL aborts) and fails it on 1 (an uncaught Python exception).
func realRestartPolicy() *trainer.RestartPolicy {
	return &trainer.RestartPolicy{
		MaxRestarts: ptr.To[int32](1),
		ExitCodes: []trainer.ExitCodeRule{
			{Action: trainer.RestartOnExitCode, Values: []int32{134}},
			{Action: trainer.FailOnExitCode, Values: []int32{1}},
		},
	}
}

// processRuntime is a TrainingRuntime whose trainer pods run
// train_ddp.py directly, one process per pod (so that the container's exit
// code is the script's, which torchrun would turn into 1), on the process
// nodes, with a checkpoint directory on the host that outlives the pods of
// an attempt.
type processRuntime struct {
	restartPolicy *trainer.RestartPolicy
	// inPlace, when set, runs the script with these arguments under
	// JobSet's in-place restart agent (restartInPlace).
	inPlace string
}

// create returns the host directory of the checkpoints: what the pods see
// as /checkpoints.
func (o processRuntime) create(ns, name string) string {
	GinkgoHelper()
	checkpoints := filepath.Join(GinkgoT().TempDir(), "checkpoints")
	rt := &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy:      &trainer.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
			RestartPolicy: o.restartPolicy,
		},
	}
	node := jobsetv1alpha2.ReplicatedJob{Name: "node", Replicas: 1}
	node.Template.Labels = map[string]string{trainer.AncestorStepLabel: trainer.TrainerStep}
	node.Template.Spec.Template.Spec = corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		NodeSelector:  map[string]string{procnode.NodeLabel: "true"},
		Tolerations:   []corev1.Toleration{procnode.Toleration},
		Containers: []corev1.Container{{
			Name: "node", Image: "pytorch/pytorch", Command: []string{"python3", "/workspace/train_ddp.py"},
			Env: []corev1.EnvVar{
				{Name: "CHECKPOINT_DIR", Value: "/checkpoints"},
				{Name: "RESTART_ATTEMPT", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
					FieldPath: "metadata.labels['" + restartAttemptLabel + "']",
				}}},
			},
			VolumeMounts: []corev1.VolumeMount{scriptsMount(), {Name: "checkpoints", MountPath: "/checkpoints"}},
		}},
		Volumes: []corev1.Volume{scriptsVolume(), {Name: "checkpoints", VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: checkpoints, Type: ptr.To(corev1.HostPathDirectoryOrCreate)},
		}}},
	}
	if o.inPlace != "" {
		restartInPlace(rt, &node, o.inPlace)
	}
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{node}
	Expect(k8s.Create(ctx, rt)).To(Succeed())
	return checkpoints
}

// realTrainJob creates a TrainJob of a processRuntime with numNodes pods
// and the script's arguments.
func realTrainJob(ns, name, runtime string, numNodes int32, args ...string) {
	GinkgoHelper()
	job := &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: runtime, Kind: ptr.To(trainer.TrainingRuntimeKind)},
			Trainer:    &trainer.Trainer{NumNodes: ptr.To(numNodes), Args: args},
		},
	}
	Expect(k8s.Create(ctx, job)).To(Succeed())
}

// expectRealState waits, for as long as real training on a busy machine
// takes, until the TrainJob's State column reads want; a job that ends in
// the other state fails at once, with its pods' logs.
func expectRealState(clientset *kubernetes.Clientset, ns, name, want string) *trainer.TrainJob {
	GinkgoHelper()
	var job *trainer.TrainJob
	Eventually(func(g Gomega) string {
		job = getTrainJob(g, ns, name)
		s := state(job)
		if (s == trainer.TrainJobComplete || s == trainer.TrainJobFailed) && s != want {
			StopTrying(fmt.Sprintf("TrainJob %s/%s is %s, not %s: %s\n%s", ns, name, s, want, conditions(job), allLogs(clientset, ns, name))).Now()
		}
		return s
	}, realJobTimeout).Should(Equal(want), func() string { return conditions(job) + "\n" + allLogs(clientset, ns, name) })
	return job
}

// realJobTimeout is how long a real job may take: seconds of training,
// but python3 importing torch on each of a few processes at once on two
// busy cores takes most of a minute.
const realJobTimeout = "6m"

// podOfRank is the pod of a completion index and restart attempt, or nil.
func podOfRank(pods []corev1.Pod, index, attempt string) *corev1.Pod {
	for i := range pods {
		p := &pods[i]
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == index && p.Labels[restartAttemptLabel] == attempt {
			return p
		}
	}
	return nil
}

func podNames(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name+" (attempt "+p.Labels[restartAttemptLabel]+")")
	}
	return out
}

// trainerLogs reads the trainer container's log through the API server, as
// kubectl logs does (the node's agent answers it).
func trainerLogs(clientset *kubernetes.Clientset, pod *corev1.Pod, previous bool) string {
	GinkgoHelper()
	var out string
	Eventually(func(g Gomega) {
		data, err := clientset.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "node", Previous: previous}).DoRaw(ctx)
		g.Expect(err).NotTo(HaveOccurred(), "the logs of pod %s", pod.Name)
		out = string(data)
	}).Should(Succeed())
	return out
}

// allLogs is every pod's log of a TrainJob, for a failure's message.
func allLogs(clientset *kubernetes.Clientset, ns, name string) string {
	list := &corev1.PodList{}
	if err := k8s.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: name}); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range list.Items {
		data, err := clientset.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: "node"}).DoRaw(context.Background())
		fmt.Fprintf(&b, "----- pod %s on %s, %s:\n%s%v\n", p.Name, p.Spec.NodeName, p.Status.Phase, data, err)
	}
	return b.String()
}

var stepLoss = regexp.MustCompile(`step \d+/\d+ loss (\d+\.\d+)`)

// stepLosses are the losses rank 0 printed, in order.
func stepLosses(logs string) []float64 {
	var out []float64
	s := bufio.NewScanner(strings.NewReader(logs))
	for s.Scan() {
		if m := stepLoss.FindStringSubmatch(s.Text()); m != nil {
			v, err := strconv.ParseFloat(m[1], 64)
			if err == nil {
				out = append(out, v)
			}
		}
	}
	return out
}

func metricValue(metrics []trainer.Metric, name string) string {
	for _, m := range metrics {
		if m.Name == name {
			return m.Value
		}
	}
	return ""
}

// prometheusFloat is how the metrics endpoint writes a reported value.
func prometheusFloat(s string) string {
	v, err := strconv.ParseFloat(s, 64)
	Expect(err).NotTo(HaveOccurred())
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func exitCodeOf(pod *corev1.Pod) int32 {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == "node" && c.State.Terminated != nil {
			return c.State.Terminated.ExitCode
		}
	}
	return -1
}

// trainJobTable is what kubectl get trainjobs prints for ns, through the
// API server's table API.
func trainJobTable(clientset *kubernetes.Clientset, ns string) *metav1.Table {
	GinkgoHelper()
	body, err := clientset.CoreV1().RESTClient().Get().
		AbsPath("/apis", trainer.GroupVersion.Group, trainer.GroupVersion.Version, "namespaces", ns, "trainjobs").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	table := &metav1.Table{}
	Expect(json.Unmarshal(body, table)).To(Succeed())
	return table
}

// tableCell is the cell of a row of a table under the column named name.
func tableCell(table *metav1.Table, row int, name string) any {
	GinkgoHelper()
	for i, c := range table.ColumnDefinitions {
		if c.Name == name {
			Expect(len(table.Rows[row].Cells)).To(BeNumerically(">", i), "row %d has no cell for column %s", row, name)
			return table.Rows[row].Cells[i]
		}
	}
	Fail("the table has no column " + name)
	return nil
}

// metricsOf is the controller's metric lines of ns.
func metricsOf(g Gomega, ns string) string {
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
}
