package simcluster

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LoseNode loses the process node that pod runs on, as when its machine
// dies: the process-node agent kills the node's processes and stops its
// kubelet. The rest is what the control plane would do, done at once: the
// node lifecycle controller marks the Node unreachable only after
// --node-monitor-grace-period (40 s and more), and the taint manager
// evicts the pod after its toleration of that taint (300 s by default),
// longer than a demo or a test can wait. Without the taints, the scheduler
// could put the replacement pod on the dead node. The pod is left Failed
// with DisruptionTarget, as the taint manager and PodGC leave it, which
// tells the Job controller's pod failure policy (and Trainforge's restart
// policy) a node failure from a failure of the training code. Other pods
// of the node are left for the control plane.
func (c *Cluster) LoseNode(ctx context.Context, pod *corev1.Pod) error {
	node := pod.Spec.NodeName
	if !slices.Contains(c.ProcessNodes, node) {
		return fmt.Errorf("pod %s/%s runs on %q, not on a process node (%v)", pod.Namespace, pod.Name, node, c.ProcessNodes)
	}
	if err := c.Agent.Lose(node); err != nil {
		return err
	}
	if err := setReachable(ctx, c.Client, node, false); err != nil {
		return fmt.Errorf("marking node %s unreachable: %w", node, err)
	}
	if err := markLost(ctx, c.Client, pod); err != nil {
		return fmt.Errorf("failing pod %s/%s of the lost node: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// ReviveNode brings a lost process node back, as a machine that restarts:
// its kubelet registers it Ready again, and the unreachable taints go, as
// the node lifecycle controller takes them off at its next pass.
func (c *Cluster) ReviveNode(ctx context.Context, name string) error {
	if err := c.Agent.Revive(ctx, name); err != nil {
		return err
	}
	if err := setReachable(ctx, c.Client, name, true); err != nil {
		return fmt.Errorf("taking the unreachable taints off node %s: %w", name, err)
	}
	return nil
}

// setReachable does to a Node what the node lifecycle controller does
// once its kubelet has stopped posting its status (reachable false: Ready
// Unknown, and the unreachable taints that keep new pods off it and evict
// the others), or has posted it again (true: the taints go; the kubelet
// has set Ready).
func setReachable(ctx context.Context, c client.Client, name string, reachable bool) error {
	now := metav1.Now()
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		if !reachable {
			for i, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					node.Status.Conditions[i].Status = corev1.ConditionUnknown
					node.Status.Conditions[i].Reason = "NodeStatusUnknown"
					node.Status.Conditions[i].Message = "Kubelet stopped posting node status."
					node.Status.Conditions[i].LastTransitionTime = now
				}
			}
			if err := c.Status().Update(ctx, node); err != nil {
				return err
			}
		}
		taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnreachable })
		if !reachable {
			for _, effect := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
				taints = append(taints, corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: effect, TimeAdded: &now})
			}
		}
		node.Spec.Taints = taints
		return c.Update(ctx, node)
	})
}

// markLost leaves a pod of a dead node as the taint manager and PodGC
// leave it: Failed, not ready, with DisruptionTarget.
func markLost(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	now := metav1.Now()
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		p := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return client.IgnoreNotFound(err)
		}
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason, p.Status.Message = "NodeLost", "its process node "+p.Spec.NodeName+" was lost"
		for i, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady || cond.Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status, p.Status.Conditions[i].Reason, p.Status.Conditions[i].LastTransitionTime = corev1.ConditionFalse, "PodFailed", now
			}
		}
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "DeletionByTaintManager",
			Message: "Taint manager: deleting due to NoExecute taint", LastTransitionTime: now,
		})
		return c.Status().Update(ctx, p)
	})
}
