package main

import (
	"context"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/hack/simcluster"
)

// loseNodeOf loses the process node of one of the job's running pods
// (simcluster's LoseNode: the machine dies, and the control plane's
// reaction comes at once instead of minutes later), and returns its name
// ("" when no pod can be lost yet).
func loseNodeOf(ctx context.Context, c *simcluster.Cluster, job *trainer.TrainJob) (string, error) {
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: job.Name}); err != nil {
		return "", nil
	}
	pod, ok := podToLose(pods.Items, c.ProcessNodes)
	if !ok {
		return "", nil
	}
	return pod.Spec.NodeName, c.LoseNode(ctx, &pod)
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
