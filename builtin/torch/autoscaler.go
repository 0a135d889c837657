package torch

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// HPAGVK is the kind of the autoscaler Torch builds for an elastic job
// whose elasticPolicy sets metrics.
var HPAGVK = autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")

// Build implements framework.Builder: for an elastic job whose
// elasticPolicy sets metrics, one HorizontalPodAutoscaler named as the
// TrainJob that scales it, through the TrainJob's scale subresource,
// between minNodes and maxNodes on those metrics (as Kubeflow Training
// Operator v1 did for a PyTorchJob). Pod metrics reach it through the
// selector in the TrainJob's status.nodes. Other jobs get nothing.
func (*plugin) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	policy, err := info.MLPolicy()
	if err != nil {
		return nil, err
	}
	if policy == nil || policy.Torch == nil || policy.Torch.ElasticPolicy == nil || len(policy.Torch.ElasticPolicy.Metrics) == 0 {
		return nil, nil
	}
	ps := info.TrainerPodSet()
	if ps == nil || ps.Elastic == nil {
		return nil, nil
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{
				APIVersion: trainer.GroupVersion.String(),
				Kind:       trainer.TrainJobKind,
				Name:       job.Name,
			},
			MinReplicas: ptr.To(ps.Elastic.Min),
			MaxReplicas: ps.Elastic.Max,
		},
	}
	for _, m := range policy.Torch.ElasticPolicy.Metrics {
		hpa.Spec.Metrics = append(hpa.Spec.Metrics, *m.DeepCopy())
	}
	u, err := framework.ToObject(info, hpa, HPAGVK)
	if err != nil {
		return nil, err
	}
	return framework.Apply(u), nil
}
