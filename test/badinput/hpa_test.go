package badinput

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// TestElasticMetricRulesAreTheHPAs checks that the webhook's rules on
// elasticPolicy.metrics (trainer.ValidateElasticMetrics, written again
// from k8s.io/kubernetes's) are the API server's: each metric, good or
// bad, gets the same errors, on the same fields, with the same details,
// as the HorizontalPodAutoscaler the controller builds from it.
func TestElasticMetricRulesAreTheHPAs(t *testing.T) {
	metrics := []string{
		`{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}`,
		`{type: Pods, pods: {metric: {name: tokens_per_second}, target: {type: AverageValue, averageValue: "1k"}}}`,
		`{type: External, external: {metric: {name: queue_depth, selector: {matchLabels: {q: a}}}, target: {type: Value, value: "30"}}}`,
		`{type: Object, object: {describedObject: {kind: Service, name: feeder}, metric: {name: rps}, target: {type: Value, value: "10"}}}`,
		`{type: ContainerResource, containerResource: {name: nvidia.com/gpu, container: node, target: {type: AverageValue, averageValue: "500m"}}}`,
		`{type: Resource, resource: {name: cpu, target: {type: Utilization}}}`,
		`{type: Cpu}`,
		`{type: ""}`,
		`{type: Resource, resource: {name: "", target: {type: Utilization, averageUtilization: 50}}}`,
		`{type: Pods, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}`,
		`{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}, pods: {metric: {name: x}, target: {type: AverageValue, averageValue: "1"}}}`,
		`{type: Resource, resource: {name: cpu, target: {type: Percent, averageUtilization: 50}}}`,
		`{type: Resource, resource: {name: cpu, target: {type: "", averageUtilization: 50}}}`,
		`{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 0}}}`,
		`{type: External, external: {metric: {name: q}, target: {type: Value, value: "-1"}}}`,
		`{type: External, external: {metric: {name: q}, target: {type: Value, value: "1", averageValue: "2"}}}`,
		`{type: External, external: {metric: {name: ""}, target: {type: Utilization, averageUtilization: 10}}}`,
		`{type: Resource, resource: {name: memory, target: {type: Utilization, averageUtilization: 50, averageValue: 1Gi}}}`,
		`{type: Pods, pods: {metric: {name: x}, target: {type: Value, value: "3"}}}`,
		`{type: Pods, pods: {metric: {name: a/b}, target: {type: AverageValue, averageValue: "1"}}}`,
		`{type: Pods, pods: {metric: {name: ".."}, target: {type: AverageValue, averageValue: "0"}}}`,
		`{type: ContainerResource, containerResource: {name: pods, container: node, target: {type: AverageValue, averageValue: "1"}}}`,
		`{type: ContainerResource, containerResource: {name: gpu, container: node, target: {type: AverageValue, averageValue: "1"}}}`,
		`{type: ContainerResource, containerResource: {name: example.com/Bad_Name, container: node, target: {type: AverageValue, averageValue: "1"}}}`,
		`{type: ContainerResource, containerResource: {name: requests.example.com/gpu, container: node, target: {type: AverageValue, averageValue: "1"}}}`,
		`{type: ContainerResource, containerResource: {name: hugepages-2Mi, container: Node_1, target: {type: Utilization, averageUtilization: 60}}}`,
		`{type: ContainerResource, containerResource: {name: "", container: "", target: {type: Utilization}}}`,
		`{type: Object, object: {describedObject: {apiVersion: a/b/c, kind: Service, name: feeder}, metric: {name: rps}, target: {type: Value, value: "10"}}}`,
		`{type: Object, object: {describedObject: {kind: "", name: "a/b"}, metric: {name: rps}, target: {type: Utilization, averageUtilization: 3}}}`,
	}
	c := apiServer(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "hpa-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for i, m := range metrics {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var spec autoscalingv2.MetricSpec
			if err := yaml.UnmarshalStrict([]byte(m), &spec); err != nil {
				t.Fatal(err)
			}
			hpa := &autoscalingv2.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("job-%d", i)},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind, Name: "job"},
					MinReplicas:    ptr.To[int32](2),
					MaxReplicas:    8,
					Metrics:        []autoscalingv2.MetricSpec{spec},
				},
			}
			var server []string
			err := c.Create(ctx, hpa)
			var status apierrors.APIStatus
			switch {
			case err == nil:
			case errors.As(err, &status) && apierrors.IsInvalid(err):
				for _, cause := range status.Status().Details.Causes {
					server = append(server, fmt.Sprintf("%s: %s", cause.Field, cause.Type))
				}
			default:
				t.Fatalf("creating the HPA: %v", err)
			}
			var ours []string
			errs := trainer.ValidateElasticMetrics(hpa.Spec.Metrics, field.NewPath("spec", "metrics"))
			for _, e := range errs {
				ours = append(ours, fmt.Sprintf("%s: %s", e.Field, string(e.Type)))
				if status != nil && !slices.ContainsFunc(status.Status().Details.Causes, func(c metav1.StatusCause) bool {
					return c.Field == e.Field && strings.HasSuffix(c.Message, e.Detail)
				}) {
					t.Errorf("metric %s: the API server gives no error on %s ending in %q: %v", m, e.Field, e.Detail, err)
				}
			}
			slices.Sort(server)
			server = slices.Compact(server)
			slices.Sort(ours)
			ours = slices.Compact(ours)
			if !slices.Equal(server, ours) {
				t.Errorf("metric %s:\n API server: %q\n webhook:    %q", m, server, ours)
			}
		})
	}
}
