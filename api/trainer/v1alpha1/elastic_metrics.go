package v1alpha1

import (
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateElasticMetrics checks the metrics of an elasticPolicy
// (mlPolicy.torch.elasticPolicy.metrics) as the API server checks the
// metrics of the HorizontalPodAutoscaler (autoscaling/v2) they become, so
// that a metric it would refuse is refused at admission, naming the field
// under path, instead of when a TrainJob's autoscaler is applied.
//
// These are the rules of k8s.io/kubernetes v1.37.2,
// pkg/apis/autoscaling/validation/validation.go (validateMetrics,
// validateMetricSpec, the validate*Source functions, validateMetricTarget,
// validateMetricIdentifier, ValidateCrossVersionObjectReference with the
// options the HPA registry strategy gives object metrics on create:
// an empty API group allowed, an invalid apiVersion not), with the
// resource-name checks of pkg/apis/core/validation
// (ValidateContainerResourceName) and pkg/apis/core/helper it calls,
// written again here because k8s.io/kubernetes is not a library a module
// can require (its staging modules are replaced by relative paths). The
// messages are the API server's, so that they read as the HPA's own. The
// rule on scaling to zero (minReplicas 0 needs an Object or External
// metric) does not apply: the autoscaler's minReplicas is minNodes, at
// least 1. Quantities are shown as written (the API server shows the
// struct).
func ValidateElasticMetrics(metrics []autoscalingv2.MetricSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range metrics {
		errs = append(errs, validateMetricSpec(&metrics[i], path.Index(i))...)
	}
	return errs
}

// metricSourceTypes are the metric types of autoscaling/v2, sorted, as the
// API server lists them.
var metricSourceTypes = []string{
	string(autoscalingv2.ContainerResourceMetricSourceType),
	string(autoscalingv2.ExternalMetricSourceType),
	string(autoscalingv2.ObjectMetricSourceType),
	string(autoscalingv2.PodsMetricSourceType),
	string(autoscalingv2.ResourceMetricSourceType),
}

const (
	sourceRequired  = "must populate information for the given metric source"
	sourceForbidden = "must populate the given metric source only"
)

func validateMetricSpec(spec *autoscalingv2.MetricSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Type == "" {
		errs = append(errs, field.Required(path.Child("type"), "must specify a metric source type"))
	}
	// The API server reports an unknown type twice, and its aggregate
	// (field.ErrorList.ToAggregate) shows it once; so does this.
	if !slices.Contains(metricSourceTypes, string(spec.Type)) {
		errs = append(errs, field.NotSupported(path.Child("type"), spec.Type, metricSourceTypes))
	}

	// The sources that are set, in the API server's order; only the first
	// is checked.
	var present []string
	check := func(name string, set bool, validate func(*field.Path) field.ErrorList) {
		if !set {
			return
		}
		present = append(present, name)
		if len(present) == 1 {
			errs = append(errs, validate(path.Child(name))...)
		}
	}
	check("object", spec.Object != nil, func(p *field.Path) field.ErrorList { return validateObjectSource(spec.Object, p) })
	check("external", spec.External != nil, func(p *field.Path) field.ErrorList { return validateExternalSource(spec.External, p) })
	check("pods", spec.Pods != nil, func(p *field.Path) field.ErrorList { return validatePodsSource(spec.Pods, p) })
	check("resource", spec.Resource != nil, func(p *field.Path) field.ErrorList { return validateResourceSource(spec.Resource, p) })
	check("containerResource", spec.ContainerResource != nil, func(p *field.Path) field.ErrorList {
		return validateContainerResourceSource(spec.ContainerResource, p)
	})

	expected := map[autoscalingv2.MetricSourceType]struct {
		field string
		set   bool
	}{
		autoscalingv2.ObjectMetricSourceType:            {"object", spec.Object != nil},
		autoscalingv2.PodsMetricSourceType:              {"pods", spec.Pods != nil},
		autoscalingv2.ResourceMetricSourceType:          {"resource", spec.Resource != nil},
		autoscalingv2.ExternalMetricSourceType:          {"external", spec.External != nil},
		autoscalingv2.ContainerResourceMetricSourceType: {"containerResource", spec.ContainerResource != nil},
	}[spec.Type]
	if expected.field != "" && !expected.set {
		errs = append(errs, field.Required(path.Child(expected.field), sourceRequired))
	}
	if len(present) != 1 {
		// The API server walks a set here, in no order; sorted, the
		// message is the same each time.
		var extra []string
		for _, name := range present {
			if name != expected.field {
				extra = append(extra, name)
			}
		}
		slices.Sort(extra)
		for _, name := range extra {
			errs = append(errs, field.Forbidden(path.Child(name), sourceForbidden))
		}
	}
	return errs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, path *field.Path) field.ErrorList {
	errs := validateDescribedObject(src.DescribedObject, path.Child("describedObject"))
	errs = append(errs, validateMetricIdentifier(src.Metric, path.Child("metric"))...)
	errs = append(errs, validateMetricTarget(src.Target, path.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(path.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, path *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, path.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, path.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(path.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(path.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, path *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, path.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, path.Child("target"))...)
	if src.Target.AverageValue == nil {
		errs = append(errs, field.Required(path.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateResourceSource(src *autoscalingv2.ResourceMetricSource, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "must specify a resource name"))
	}
	errs = append(errs, validateMetricTarget(src.Target, path.Child("target"))...)
	return append(errs, validateUtilizationOrValue(src.Target, path.Child("target"))...)
}

func validateContainerResourceSource(src *autoscalingv2.ContainerResourceMetricSource, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, validateContainerResourceName(src.Name, path.Child("name"))...)
	}
	if src.Container == "" {
		errs = append(errs, field.Required(path.Child("container"), "must specify a container"))
	} else {
		for _, msg := range validation.IsDNS1123Label(src.Container) {
			errs = append(errs, field.Invalid(path.Child("container"), src.Container, msg))
		}
	}
	errs = append(errs, validateMetricTarget(src.Target, path.Child("target"))...)
	return append(errs, validateUtilizationOrValue(src.Target, path.Child("target"))...)
}

// validateUtilizationOrValue is the rule of the resource sources: a
// utilization or an average value, one of them.
func validateUtilizationOrValue(t autoscalingv2.MetricTarget, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(path.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(path.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateMetricTarget(t autoscalingv2.MetricTarget, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(path.Child("type"), "must specify a metric target type"))
	}
	switch t.Type {
	case autoscalingv2.UtilizationMetricType, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType:
	default:
		errs = append(errs, field.Invalid(path.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	for _, q := range []struct {
		name string
		v    *resource.Quantity
	}{{"value", t.Value}, {"averageValue", t.AverageValue}} {
		if q.v != nil && q.v.Sign() != 1 {
			errs = append(errs, field.Invalid(path.Child(q.name), q.v.String(), "must be positive"))
		}
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(path.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, path *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(path.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(id.Name) {
		errs = append(errs, field.Invalid(path.Child("name"), id.Name, msg))
	}
	return errs
}

// validateDescribedObject is ValidateCrossVersionObjectReference with the
// options of an object metric's describedObject on create: an empty API
// group is allowed, an apiVersion that does not parse is not.
func validateDescribedObject(ref autoscalingv2.CrossVersionObjectReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{{"kind", ref.Kind}, {"name", ref.Name}} {
		if f.value == "" {
			errs = append(errs, field.Required(path.Child(f.name), ""))
			continue
		}
		for _, msg := range content.IsPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, msg))
		}
	}
	if _, err := schema.ParseGroupVersion(ref.APIVersion); err != nil {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return errs
}

// standardResources are the resource names the core API knows without a
// domain (pkg/apis/core/helper's standardResources).
var standardResources = []corev1.ResourceName{
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
	corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceStorage, corev1.ResourceRequestsStorage,
	corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
}

// validateContainerResourceName is the core API's
// ValidateContainerResourceName: a qualified name; without a domain, a
// standard resource of containers (cpu, memory, ephemeral-storage,
// hugepages-<size>); with one, kubernetes.io's or an extended resource.
func validateContainerResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	// validateResourceName
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	unqualified := !strings.Contains(string(name), "/")
	if len(errs) == 0 && unqualified && !isStandardResourceName(name) {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource type or fully qualified"))
	}
	// ValidateContainerResourceName
	switch {
	case unqualified:
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory && name != corev1.ResourceEphemeralStorage &&
			!strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
		}
	case !strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix) && !isExtendedResourceName(name):
		errs = append(errs, field.Invalid(path, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

func isStandardResourceName(name corev1.ResourceName) bool {
	return slices.Contains(standardResources, name) ||
		strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) || strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// isExtendedResourceName is the core helper's IsExtendedResourceName for a
// name with a domain other than kubernetes.io: not a quota name
// ("requests."), and a qualified name once prefixed as quota names are.
func isExtendedResourceName(name corev1.ResourceName) bool {
	if strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}
