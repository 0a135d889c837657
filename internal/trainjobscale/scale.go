// Package trainjobscale resizes a TrainJob through its scale subresource,
// as kubectl scale and the HorizontalPodAutoscaler do: the demo and the
// test suites resize elastic TrainJobs the way their users' tools do.
package trainjobscale

import (
	"context"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Set writes replicas as the scale of TrainJob key (its
// spec.trainer.numNodes). The scale carries the TrainJob's
// resourceVersion, so an update conflicts when the controller wrote the
// TrainJob's status between the read and the write; Set then reads the
// scale again, as kubectl scale does.
func Set(ctx context.Context, c client.Client, key client.ObjectKey, replicas int32) error {
	job := &trainer.TrainJob{}
	job.Namespace, job.Name = key.Namespace, key.Name
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale := &autoscalingv1.Scale{}
		if err := c.SubResource("scale").Get(ctx, job, scale); err != nil {
			return err
		}
		scale.Spec.Replicas = replicas
		return c.SubResource("scale").Update(ctx, job, client.WithSubResourceBody(scale))
	})
}
