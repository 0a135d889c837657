package v1alpha1

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// The rules are the HorizontalPodAutoscaler's; test/badinput's
// TestElasticMetricRulesAreTheHPAs checks these cases against a real API
// server.
func TestValidateElasticMetrics(t *testing.T) {
	cases := []struct {
		name, metrics, want string
	}{
		{name: "cpu utilization", metrics: `[{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]`},
		{name: "pods average value", metrics: `[{type: Pods, pods: {metric: {name: tokens_per_second}, target: {type: AverageValue, averageValue: "1k"}}}]`},
		{name: "external value", metrics: `[{type: External, external: {metric: {name: queue_depth}, target: {type: Value, value: "30"}}}]`},
		{name: "object value", metrics: `[{type: Object, object: {describedObject: {kind: Service, name: feeder}, metric: {name: rps}, target: {type: Value, value: "10"}}}]`},
		{name: "container gpu", metrics: `[{type: ContainerResource, containerResource: {name: nvidia.com/gpu, container: node, target: {type: AverageValue, averageValue: "500m"}}}]`},
		{name: "utilization without a value", metrics: `[{type: Resource, resource: {name: cpu, target: {type: Utilization}}}]`,
			want: "m[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization"},
		{name: "unknown type", metrics: `[{type: Cpu}]`,
			want: `m[0].type: Unsupported value: "Cpu": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`},
		{name: "no resource name", metrics: `[{type: Resource, resource: {name: "", target: {type: Utilization, averageUtilization: 50}}}]`,
			want: "m[0].resource.name: Required value: must specify a resource name"},
		{name: "type without its source", metrics: `[{type: Pods, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]`,
			want: "m[0].pods: Required value: must populate information for the given metric source"},
		{name: "two sources", metrics: `[{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}, pods: {metric: {name: x}, target: {type: AverageValue, averageValue: "1"}}}]`,
			want: "m[0].pods: Forbidden: must populate the given metric source only"},
		{name: "target type", metrics: `[{type: Resource, resource: {name: cpu, target: {type: Percent, averageUtilization: 50}}}]`,
			want: `m[0].resource.target.type: Invalid value: "Percent": must be either Utilization, Value, or AverageValue`},
		{name: "zero utilization", metrics: `[{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 0}}}]`,
			want: "m[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0"},
		{name: "negative value", metrics: `[{type: External, external: {metric: {name: q}, target: {type: Value, value: "-1"}}}]`,
			want: `m[0].external.target.value: Invalid value: "-1": must be positive`},
		{name: "both utilization and value", metrics: `[{type: Resource, resource: {name: memory, target: {type: Utilization, averageUtilization: 50, averageValue: 1Gi}}}]`,
			want: "m[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization"},
		{name: "pods without averageValue", metrics: `[{type: Pods, pods: {metric: {name: x}, target: {type: Value, value: "3"}}}]`,
			want: "m[0].pods.target.averageValue: Required value: must specify a positive target averageValue"},
		{name: "metric name with a slash", metrics: `[{type: Pods, pods: {metric: {name: a/b}, target: {type: AverageValue, averageValue: "1"}}}]`,
			want: `m[0].pods.metric.name: Invalid value: "a/b": may not contain '/'`},
		{name: "container resource not for containers", metrics: `[{type: ContainerResource, containerResource: {name: pods, container: node, target: {type: AverageValue, averageValue: "1"}}}]`,
			want: `m[0].containerResource.name: Invalid value: "pods": must be a standard resource for containers`},
		{name: "container name", metrics: `[{type: ContainerResource, containerResource: {name: cpu, container: Node_1, target: {type: Utilization, averageUtilization: 60}}}]`,
			want: `m[0].containerResource.container: Invalid value: "Node_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{name: "described object's apiVersion", metrics: `[{type: Object, object: {describedObject: {apiVersion: a/b/c, kind: Service, name: feeder}, metric: {name: rps}, target: {type: Value, value: "10"}}}]`,
			want: `m[0].object.describedObject.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`},
		{name: "the second metric", metrics: `[{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}, {type: External, external: {metric: {name: q}, target: {type: Utilization, averageUtilization: 10}}}]`,
			want: "m[1].external.target.averageValue: Required value: must set either a target value for metric or a per-pod target"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var metrics []autoscalingv2.MetricSpec
			if err := yaml.UnmarshalStrict([]byte(tc.metrics), &metrics); err != nil {
				t.Fatal(err)
			}
			got := ""
			if err := ValidateElasticMetrics(metrics, field.NewPath("m")).ToAggregate(); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
