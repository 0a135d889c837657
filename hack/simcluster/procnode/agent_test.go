package procnode

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// startFake runs an agent of one node against a fake API server.
func startFake(t *testing.T) (*Agent, *fake.Clientset) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("process nodes need root") // and refuse to start without it
	}
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir)
	client := fake.NewClientset()
	a, err := start(context.Background(), Config{
		Nodes: []string{"process-node-1"}, CPU: "4", Memory: "8Gi", Dir: filepath.Join(dir, "agent"),
		TLSCertFile: certFile, TLSKeyFile: keyFile,
		RestartBackoff: 10 * time.Millisecond, RetryInterval: 10 * time.Millisecond,
	}, client, dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	return a, client
}

func selfSigned(t *testing.T, dir string) (string, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "procnode-test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return certFile, keyFile
}

func fakePod(name string, policy corev1.RestartPolicy, command ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: "process-node-1", RestartPolicy: policy,
			Containers: []corev1.Container{{Name: "main", Image: "none", Command: command}}},
	}
}

func getPod(g Gomega, client *fake.Clientset, name string) *corev1.Pod {
	pod, err := client.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	return pod
}

// logs asks the node's log server, as the API server would.
func logs(a *Agent, pod, query string) (string, error) {
	n := a.nodes["process-node-1"]
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get(fmt.Sprintf("https://%s:%d/containerLogs/ns/%s/main?%s", n.ip, n.port, pod, query))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	return string(b), err
}

func TestAgentRegistersAReadyNodeWithItsKubeletEndpoint(t *testing.T) {
	g := NewWithT(t)
	a, client := startFake(t)
	node, err := client.CoreV1().Nodes().Get(context.Background(), "process-node-1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Labels).To(HaveKeyWithValue(NodeLabel, "true"))
	g.Expect(node.Spec.Taints).To(ConsistOf(corev1.Taint{Key: NodeTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}))
	g.Expect(node.Status.Conditions).To(ContainElement(And(
		HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))
	n := a.nodes["process-node-1"]
	g.Expect(node.Status.Addresses).To(ConsistOf(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: n.ip}))
	g.Expect(node.Status.DaemonEndpoints.KubeletEndpoint.Port).To(BeEquivalentTo(n.port))
	lease, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), "process-node-1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*lease.Spec.HolderIdentity).To(Equal("process-node-1"))
}

func TestAgentRunsAPodToItsExitCode(t *testing.T) {
	g := NewWithT(t)
	a, client := startFake(t)
	_, err := client.CoreV1().Pods("ns").Create(context.Background(), fakePod("exit3", corev1.RestartPolicyNever, "sh", "-c", "echo hi; exit 3"), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	var pod *corev1.Pod
	g.Eventually(func(g Gomega) {
		pod = getPod(g, client, "exit3")
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodFailed))
	}, time.Minute).Should(Succeed())
	g.Expect(pod.Status.PodIP).To(HavePrefix("127."))
	g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
	term := pod.Status.ContainerStatuses[0].State.Terminated
	g.Expect(term).NotTo(BeNil())
	g.Expect(term.ExitCode).To(BeEquivalentTo(3))
	g.Expect(term.Reason).To(Equal("Error"))
	g.Expect(logs(a, "exit3", "")).To(Equal("hi\n"))
	g.Expect(logs(a, "exit3", "previous=true")).Error().To(MatchError(ContainSubstring("previous terminated container")))
}

func TestAgentRestartsAFailedContainerUnderOnFailure(t *testing.T) {
	g := NewWithT(t)
	a, client := startFake(t)
	marker := filepath.Join(t.TempDir(), "once")
	_, err := client.CoreV1().Pods("ns").Create(context.Background(), fakePod("again", corev1.RestartPolicyOnFailure, "sh", "-c",
		`if [ -e "$0" ]; then echo second; exit 0; fi; echo first; touch "$0"; exit 7`, marker), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	var pod *corev1.Pod
	g.Eventually(func(g Gomega) {
		pod = getPod(g, client, "again")
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded))
	}, time.Minute).Should(Succeed())
	cs := pod.Status.ContainerStatuses[0]
	g.Expect(cs.RestartCount).To(BeEquivalentTo(1))
	g.Expect(cs.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(7))
	g.Expect(cs.State.Terminated.ExitCode).To(BeEquivalentTo(0))
	g.Expect(logs(a, "again", "")).To(Equal("second\n"))
	g.Expect(logs(a, "again", "previous=true")).To(Equal("first\n"))
}

func TestAgentStopsADeletedPodThenDeletesIt(t *testing.T) {
	g := NewWithT(t)
	_, client := startFake(t)
	_, err := client.CoreV1().Pods("ns").Create(context.Background(), fakePod("sleeper", corev1.RestartPolicyNever, "sh", "-c",
		`trap 'echo terminated; exit 0' TERM; while true; do sleep 0.1; done`), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	var pod *corev1.Pod
	g.Eventually(func(g Gomega) {
		pod = getPod(g, client, "sleeper")
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodRunning))
		g.Expect(pod.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))))
	}, time.Minute).Should(Succeed())
	var pid int
	_, err = fmt.Sscanf(pod.Status.ContainerStatuses[0].ContainerID, "procnode://%d", &pid)
	g.Expect(err).NotTo(HaveOccurred())
	// What the API server does on a graceful delete: a deletion
	// timestamp; the kubelet then stops the pod and deletes it for good.
	now := metav1.Now()
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &now, new(int64)
	*pod.DeletionGracePeriodSeconds = 30
	_, err = client.CoreV1().Pods("ns").Update(context.Background(), pod, metav1.UpdateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error {
		_, err := client.CoreV1().Pods("ns").Get(context.Background(), "sleeper", metav1.GetOptions{})
		return err
	}, time.Minute).Should(MatchError(ContainSubstring("not found")))
	g.Expect(syscall.Kill(pid, 0)).To(MatchError(syscall.ESRCH))
}

// A runtime's torchrun is the nodes' stand-in (image/torchrun), whose
// keep-alive keys torch 1.13's own lacks; python3 stays Debian's.
func TestAgentPutsTheImagesStandInsFirstOnThePath(t *testing.T) {
	g := NewWithT(t)
	a, client := startFake(t)
	_, err := client.CoreV1().Pods("ns").Create(context.Background(), fakePod("which", corev1.RestartPolicyNever, "sh", "-c", "command -v torchrun; command -v python3"), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		g.Expect(getPod(g, client, "which").Status.Phase).To(Equal(corev1.PodSucceeded))
	}, time.Minute).Should(Succeed())
	torchrunPath := filepath.Join(a.cfg.Dir, "image", "bin", "torchrun")
	g.Expect(logs(a, "which", "")).To(Equal(torchrunPath + "\n/usr/bin/python3\n"))
	shim, err := os.ReadFile(torchrunPath)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(shim)).To(ContainSubstring("keep_alive_interval"))
}
