package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/trainforge/trainforge/hack/simcluster/procnode"
)

// Process nodes (hack/simcluster/procnode) run their pods as real
// processes: these specs prove the kubelet's part the real-job specs rely
// on, on plain pods and a JobSet, without Trainforge.
var _ = Describe("Process nodes", func() {
	var clientset *kubernetes.Clientset
	BeforeEach(func() {
		Expect(cluster.NoProcessNodes).To(BeEmpty())
		var err error
		clientset, err = kubernetes.NewForConfig(cluster.Config)
		Expect(err).NotTo(HaveOccurred())
	})

	It("run a pod's command as a process: its exit code, its phase, its logs", func() {
		ns := newNamespace()
		Expect(k8s.Create(ctx, processPod(ns, "exit3", corev1.RestartPolicyNever, "sh", "-c", "echo hi; exit 3"))).To(Succeed())
		pod := waitPodPhase(ns, "exit3", corev1.PodFailed)
		Expect(cluster.ProcessNodes).To(ContainElement(pod.Spec.NodeName))
		Expect(pod.Status.PodIP).To(HavePrefix("127."))
		Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
		t := pod.Status.ContainerStatuses[0].State.Terminated
		Expect(t).NotTo(BeNil())
		Expect(t.ExitCode).To(BeEquivalentTo(3))
		Expect(t.Reason).To(Equal("Error"))
		Expect(podLogs(clientset, ns, "exit3", corev1.PodLogOptions{})).To(Equal("hi\n"))
	})

	It("give a container its env and volumes as a kubelet does, and a token bound to the pod", func() {
		ns := newNamespace()
		Expect(k8s.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"},
			Data:       map[string]string{"greeting": "hello", "train.sh": "echo from-the-configmap"},
		})).To(Succeed())
		Expect(k8s.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sec"},
			Data:       map[string][]byte{"password": []byte("s3cret")},
		})).To(Succeed())
		pod := processPod(ns, "env", corev1.RestartPolicyNever, "sh", "-c", strings.Join([]string{
			`echo "name=$POD_NAME attempt=$ATTEMPT index=$INDEX greeting=$GREETING password=$PASSWORD cpu=$CPU combined=$COMBINED"`,
			`echo "args=$0 $1"`,
			`sh /config/train.sh`,
			`test -s /var/run/secrets/tokens/token && echo token-present`,
			`cat /podinfo/name; echo`,
			`getent hosts "$(cat /proc/sys/kernel/hostname)" | cut -f1 -d' ' | head -1`,
		}, "; "))
		pod.Spec.Containers[0].Args = []string{"$(GREETING)-arg", "$$(GREETING)"}
		pod.Annotations = map[string]string{"jobset.sigs.k8s.io/restart-attempt": "2"}
		pod.Labels = map[string]string{batchv1.JobCompletionIndexAnnotation: "1"}
		c := &pod.Spec.Containers[0]
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}
		c.Env = []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "ATTEMPT", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['jobset.sigs.k8s.io/restart-attempt']"}}},
			{Name: "INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + batchv1.JobCompletionIndexAnnotation + "']"}}},
			{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "greeting"}}},
			{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "password"}}},
			{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			{Name: "COMBINED", Value: "$(GREETING)/$(POD_NAME)"},
		}
		c.VolumeMounts = []corev1.VolumeMount{
			{Name: "cfg", MountPath: "/config", ReadOnly: true},
			{Name: "token", MountPath: "/var/run/secrets/tokens"},
			{Name: "podinfo", MountPath: "/podinfo"},
		}
		pod.Spec.Volumes = []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
				ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "procnode-e2e", ExpirationSeconds: ptr.To[int64](3600), Path: "token"},
			}}}}},
			{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			}}}},
		}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		done := waitPodPhase(ns, "env", corev1.PodSucceeded)
		Expect(podLogs(clientset, ns, "env", corev1.PodLogOptions{})).To(Equal(strings.Join([]string{
			"name=env attempt=2 index=1 greeting=hello password=s3cret cpu=2 combined=hello/env",
			"args=hello-arg $(GREETING)",
			"from-the-configmap",
			"token-present",
			"env",
			done.Status.PodIP,
		}, "\n") + "\n"))
	})

	It("bind a projected token to the pod with the audience it asks for", func() {
		ns := newNamespace()
		pod := processPod(ns, "token", corev1.RestartPolicyNever, "cat", "/var/run/secrets/tokens/token")
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "token", MountPath: "/var/run/secrets/tokens"}}
		pod.Spec.Volumes = []corev1.Volume{{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{
			ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "procnode-e2e", ExpirationSeconds: ptr.To[int64](1200), Path: "token"},
		}}}}}}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		done := waitPodPhase(ns, "token", corev1.PodSucceeded)
		token := podLogs(clientset, ns, "token", corev1.PodLogOptions{})
		review, err := clientset.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{"procnode-e2e"}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(review.Status.Authenticated).To(BeTrue(), "%+v", review.Status)
		Expect(review.Status.User.Username).To(Equal("system:serviceaccount:" + ns + ":default"))
		Expect(review.Status.User.Extra["authentication.kubernetes.io/pod-uid"]).To(ConsistOf(string(done.UID)))
	})

	It("restart a failed container in place under OnFailure, its earlier run's logs kept as --previous", func() {
		ns := newNamespace()
		pod := processPod(ns, "again", corev1.RestartPolicyOnFailure, "sh", "-c",
			`if [ -e /data/once ]; then echo second run; exit 0; fi; echo first run; touch /data/once; exit 7`)
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		done := waitPodPhase(ns, "again", corev1.PodSucceeded)
		cs := done.Status.ContainerStatuses[0]
		Expect(cs.RestartCount).To(BeEquivalentTo(1))
		Expect(cs.LastTerminationState.Terminated).NotTo(BeNil())
		Expect(cs.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(7))
		Expect(cs.State.Terminated.ExitCode).To(BeEquivalentTo(0))
		Expect(podLogs(clientset, ns, "again", corev1.PodLogOptions{})).To(Equal("second run\n"))
		Expect(podLogs(clientset, ns, "again", corev1.PodLogOptions{Previous: true})).To(Equal("first run\n"))
	})

	It("follow a running container's log until it ends", func() {
		ns := newNamespace()
		// The container waits for a file the spec makes in a hostPath
		// volume, once it has read the first line through the stream.
		gate := GinkgoT().TempDir()
		pod := processPod(ns, "follow", corev1.RestartPolicyNever, "sh", "-c",
			`echo one; while [ ! -e /gate/open ]; do sleep 0.1; done; echo two`)
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "gate", MountPath: "/gate"}}
		pod.Spec.Volumes = []corev1.Volume{{Name: "gate", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: gate}}}}
		Expect(k8s.Create(ctx, pod)).To(Succeed())
		waitPodPhase(ns, "follow", corev1.PodRunning)
		r, err := clientset.CoreV1().Pods(ns).GetLogs("follow", &corev1.PodLogOptions{Follow: true}).Stream(ctx)
		Expect(err).NotTo(HaveOccurred())
		defer r.Close()
		lines := bufio.NewReader(r)
		Expect(lines.ReadString('\n')).To(Equal("one\n"))
		Expect(os.WriteFile(filepath.Join(gate, "open"), nil, 0o644)).To(Succeed())
		rest, err := io.ReadAll(lines)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(rest)).To(Equal("two\n"))
		waitPodPhase(ns, "follow", corev1.PodSucceeded)
	})

	It("resolve every pod of a JobSet by its hostname from each, and connect them", func() {
		ns := newNamespace()
		js := &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pair"}}
		rj := jobsetv1alpha2.ReplicatedJob{Name: "w", Replicas: 1}
		rj.Template.Spec.Parallelism, rj.Template.Spec.Completions = ptr.To[int32](2), ptr.To[int32](2)
		rj.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		rj.Template.Spec.BackoffLimit = ptr.To[int32](0)
		// Pod 0 serves on its own name's address; pod 1 resolves pod 0 by
		// <hostname>.<subdomain> and sends it a line.
		script := `
import os, socket, sys, time
me = int(os.environ["JOB_COMPLETION_INDEX"])
peer = "pair-w-0-0.pair"
if me == 0:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((socket.gethostbyname(socket.gethostname()), 23456))
    s.listen(1)
    conn, _ = s.accept()
    print("pod 0 got:", conn.recv(100).decode(), flush=True)
else:
    print("pod 1 resolves", peer, "to", socket.gethostbyname(peer), flush=True)
    for _ in range(600):
        try:
            c = socket.create_connection((peer, 23456))
            break
        except OSError:
            time.sleep(0.1)
    c.sendall(b"hello from pod 1")
`
		rj.Template.Spec.Template.Spec = *processPodSpec(corev1.RestartPolicyNever, "python3", "-c", script)
		js.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{rj}
		Expect(k8s.Create(ctx, js)).To(Succeed())
		var pods []corev1.Pod
		Eventually(func(g Gomega) {
			list := &corev1.PodList{}
			g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			g.Expect(phases(list.Items)).To(ConsistOf(corev1.PodSucceeded, corev1.PodSucceeded), "%s", podSummary(list.Items))
			pods = list.Items
		}).Should(Succeed())
		byIndex := map[string]corev1.Pod{}
		for _, p := range pods {
			byIndex[p.Labels[batchv1.JobCompletionIndexAnnotation]] = p
		}
		Expect(podLogs(clientset, ns, byIndex["0"].Name, corev1.PodLogOptions{})).To(Equal("pod 0 got: hello from pod 1\n"))
		Expect(podLogs(clientset, ns, byIndex["1"].Name, corev1.PodLogOptions{})).To(Equal(
			"pod 1 resolves pair-w-0-0.pair to " + byIndex["0"].Status.PodIP + "\n"))
	})

	It("stop a deleted pod's processes, children too, then delete the pod", func() {
		ns := newNamespace()
		Expect(k8s.Create(ctx, processPod(ns, "sleeper", corev1.RestartPolicyNever, "sh", "-c",
			`sleep 1000 & echo "child $!"; trap 'echo terminated; exit 0' TERM; while true; do sleep 1; done`))).To(Succeed())
		pod := waitPodPhase(ns, "sleeper", corev1.PodRunning)
		pid, err := strconv.Atoi(strings.TrimPrefix(pod.Status.ContainerStatuses[0].ContainerID, "procnode://"))
		Expect(err).NotTo(HaveOccurred(), "containerID %q", pod.Status.ContainerStatuses[0].ContainerID)
		var child int
		Eventually(func(g Gomega) {
			_, err := fmt.Sscanf(podLogs(clientset, ns, "sleeper", corev1.PodLogOptions{}), "child %d", &child)
			g.Expect(err).NotTo(HaveOccurred())
		}).Should(Succeed())
		Expect(alive(pid)).To(BeTrue())
		Expect(alive(child)).To(BeTrue())
		Expect(k8s.Delete(ctx, pod, client.GracePeriodSeconds(5))).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
			g.Expect(err).To(MatchError(ContainSubstring("not found")))
		}).Should(Succeed())
		Expect(alive(pid)).To(BeFalse(), "the container's process")
		Expect(alive(child)).To(BeFalse(), "the process the container started")
	})
})

// processPodSpec is a pod spec for the process nodes: their label and
// toleration, one container running command.
func processPodSpec(policy corev1.RestartPolicy, command ...string) *corev1.PodSpec {
	return &corev1.PodSpec{
		RestartPolicy: policy,
		NodeSelector:  map[string]string{procnode.NodeLabel: "true"},
		Tolerations:   []corev1.Toleration{procnode.Toleration},
		Containers:    []corev1.Container{{Name: "main", Image: "none:process-nodes-run-no-images", Command: command}},
	}
}

func processPod(ns, name string, policy corev1.RestartPolicy, command ...string) *corev1.Pod {
	spec := processPodSpec(policy, command...)
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: *spec}
}

func waitPodPhase(ns, name string, phase corev1.PodPhase) *corev1.Pod {
	GinkgoHelper()
	pod := &corev1.Pod{}
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(Equal(phase), "%s", podSummary([]corev1.Pod{*pod}))
	}).Should(Succeed())
	return pod
}

func podLogs(cs *kubernetes.Clientset, ns, name string, opts corev1.PodLogOptions) string {
	GinkgoHelper()
	var out []byte
	Eventually(func(g Gomega) {
		r, err := cs.CoreV1().Pods(ns).GetLogs(name, &opts).Stream(context.Background())
		g.Expect(err).NotTo(HaveOccurred())
		defer r.Close()
		out, err = io.ReadAll(r)
		g.Expect(err).NotTo(HaveOccurred())
	}).Should(Succeed())
	return string(out)
}

func podSummary(pods []corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "%s: %s on %q %s;", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.Message)
		for _, cs := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, " %s %+v", cs.Name, cs.State)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// alive says whether a process of that pid exists (and is not a zombie
// left for its parent to reap).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	stat := string(data)
	fields := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}
