package main

import (
	"context"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// loseNodeOf loses the process node of one of the job's running pods, as
// when its machine dies, and returns its name ("" when no pod can be lost
// yet). The process-node agent kills the node's processes and stops its
// kubelet; the rest is what the control plane would do, done at once: the
// node lifecycle controller marks the Node unreachable after
// --node-monitor-grace-period (40 s and more), and the taint manager
// evicts the pod only after its toleration of that taint (300 s by
// default), which is slower than the demo can wait for. Without the
// taints, the scheduler could put the replacement pod on the dead node.
func loseNodeOf(ctx context.Context, c *simcluster.Cluster, job *trainer.TrainJob) (string, error) {
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: job.Name}); err != nil {
		return "", nil
	}
	pod, ok := podToLose(pods.Items, c.ProcessNodes)
	if !ok {
		return "", nil
	}
	node := pod.Spec.NodeName
	if err := c.Agent.Lose(node); err != nil {
		return "", err
	}
	if err := markUnreachable(ctx, c.Client, node); err != nil {
		return "", err
	}
	return node, markLost(ctx, c.Client, &pod)
}

// podToLose is the running pod, on a process node, of the highest
// completion index but 0: the first pod hosts the c10d rendezvous, whose
// loss would end every node's torchrun rather than re-form the group.
func podToLose(pods []corev1.Pod, processNodes []string) (corev1.Pod, bool) {
	var lost corev1.Pod
	best := 0
	for _, p := range pods {
		i, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		if err != nil || i <= best || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning ||
			!slices.Contains(processNodes, p.Spec.NodeName) {
			continue
		}
		lost, best = p, i
	}
	return lost, best > 0
}

// markUnreachable does to the Node what the node lifecycle controller does
// once a kubelet has stopped posting its status: Ready Unknown, and the
// unreachable taints that keep new pods off it and evict the others.
func markUnreachable(ctx context.Context, c client.Client, name string) error {
	now := metav1.Now()
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
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
		for _, effect := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
			t := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: effect, TimeAdded: &now}
			if !slices.ContainsFunc(node.Spec.Taints, func(o corev1.Taint) bool { return o.MatchTaint(&t) }) {
				node.Spec.Taints = append(node.Spec.Taints, t)
			}
		}
		return c.Update(ctx, node)
	})
}

// markLost leaves the pod as the taint manager and PodGC leave a pod of a
// dead node: Failed, with the DisruptionTarget condition that tells the
// Job controller's pod failure policy (and Trainforge's restart policy) a
// node failure from a failure of the training code.
func markLost(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	now := metav1.Now()
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		p := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return client.IgnoreNotFound(err)
		}
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason, p.Status.Message = "NodeLost", "the demo lost the pod's process node "+p.Spec.NodeName
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
