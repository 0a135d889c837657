package procnode

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A lost node's processes are killed and its kubelet stops; revived, the
// node is Ready again under the same Node and address, leaves the pod it
// lost as the control plane left it, and runs the pods bound to it next.
func TestALostNodeRevivedRunsNewPodsOnly(t *testing.T) {
	g := NewWithT(t)
	a, client := startFake(t)
	ctx := context.Background()
	_, err := client.CoreV1().Pods("ns").Create(ctx, fakePod("before", corev1.RestartPolicyNever, "sh", "-c",
		`while true; do sleep 0.1; done`), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		g.Expect(getPod(g, client, "before").Status.Phase).To(Equal(corev1.PodRunning))
	}, time.Minute).Should(Succeed())
	ip := a.nodes["process-node-1"].ip

	g.Expect(a.Revive(ctx, "process-node-1")).To(MatchError(ContainSubstring("is not lost")))
	g.Expect(a.Lose("process-node-1")).To(Succeed())
	g.Expect(a.Revive(ctx, "process-node-9")).To(MatchError(ContainSubstring(`no process node "process-node-9"`)))
	// What the control plane does to a pod of a dead node.
	lost := getPod(g, client, "before")
	lost.Status.Phase = corev1.PodFailed
	_, err = client.CoreV1().Pods("ns").UpdateStatus(ctx, lost, metav1.UpdateOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(a.Revive(ctx, "process-node-1")).To(Succeed())
	node, err := client.CoreV1().Nodes().Get(ctx, "process-node-1", metav1.GetOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(node.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))
	g.Expect(node.Status.Addresses).To(ConsistOf(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip}))

	_, err = client.CoreV1().Pods("ns").Create(ctx, fakePod("after", corev1.RestartPolicyNever, "sh", "-c", "exit 0"), metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		g.Expect(getPod(g, client, "after").Status.Phase).To(Equal(corev1.PodSucceeded))
	}, time.Minute).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(getPod(g, client, "before").Status.Phase).To(Equal(corev1.PodFailed))
	}, time.Second).Should(Succeed())
}
