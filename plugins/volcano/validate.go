package volcano

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// policyPath is where a runtime sets the policy.
var policyPath = field.NewPath("spec", "podGroupPolicy", PolicyKey)

// Validate checks, for a runtime that asks for Volcano, what would make
// its PodGroup wrong or unschedulable: the network topology, the queue
// annotation, the gang and its priority class. Problems of the runtime are
// reported on the runtime's field when the runtime itself is admitted, and
// on spec.runtimeRef, naming the runtime's field, when a TrainJob is.
func (p *Volcano) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	info := req.Info
	pol, err := volcanoPolicy(info)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "podGroupPolicy"), "", err.Error())}, nil
	}
	if pol == nil {
		return nil, nil, nil
	}
	var errs field.ErrorList
	if _, err := networkTopology(pol); err != nil {
		errs = append(errs, runtimeError(req, asFieldError(err)))
	}
	errs = append(errs, validateQueue(req)...)
	pods, err := gang(info)
	if err != nil {
		errs = append(errs, req.TemplateError(err.Error()))
		return nil, errs, nil
	}
	if _, err := priorityClassName(info, pods); err != nil {
		var fe *field.Error
		if !errors.As(err, &fe) {
			fe = field.Invalid(field.NewPath("spec", "template"), "", err.Error())
		}
		errs = append(errs, runtimeError(req, fe))
	}
	return nil, errs, nil
}

// volcanoPolicy returns the runtime's volcano policy, or nil when the
// runtime does not ask for Volcano.
func volcanoPolicy(info *framework.Info) (*trainer.VolcanoPodGroupPolicySource, error) {
	pol, err := info.PodGroupPolicy()
	if err != nil || pol == nil {
		return nil, err
	}
	return pol.Volcano, nil
}

// networkTopology decodes the policy's networkTopology, strictly, into
// Volcano's own type, and checks it: the PodGroup CRD would refuse a mode
// it does not know, and a tier below 1 matches no hyperNode.
func networkTopology(pol *trainer.VolcanoPodGroupPolicySource) (*volcanov1beta1.NetworkTopologySpec, error) {
	if pol.NetworkTopology == nil || len(pol.NetworkTopology.Raw) == 0 || string(pol.NetworkTopology.Raw) == "null" {
		return nil, nil
	}
	path := policyPath.Child("networkTopology")
	spec := &volcanov1beta1.NetworkTopologySpec{}
	dec := json.NewDecoder(bytes.NewReader(pol.NetworkTopology.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		return nil, field.Invalid(path, string(pol.NetworkTopology.Raw),
			fmt.Sprintf("%v; networkTopology takes mode (hard or soft) and highestTierAllowed (an integer of at least 1)", err))
	}
	switch spec.Mode {
	case "", volcanov1beta1.HardNetworkTopologyMode, volcanov1beta1.SoftNetworkTopologyMode:
	default:
		return nil, field.NotSupported(path.Child("mode"), spec.Mode,
			[]volcanov1beta1.NetworkTopologyMode{volcanov1beta1.HardNetworkTopologyMode, volcanov1beta1.SoftNetworkTopologyMode})
	}
	if t := spec.HighestTierAllowed; t != nil && *t < 1 {
		return nil, field.Invalid(path.Child("highestTierAllowed"), *t, "must be at least 1: tier 1 is the lowest tier of hyperNodes")
	}
	return spec, nil
}

// validateQueue checks the queue annotation: a PodGroup whose queue does not
// exist is never scheduled, and an empty or malformed name cannot exist.
func validateQueue(req framework.ValidateRequest) field.ErrorList {
	info, job := req.Info, req.NewJob
	queue, ok := info.Annotations[QueueAnnotation]
	if !ok {
		return nil
	}
	msg := ""
	if queue == "" {
		msg = "the Volcano queue name must not be empty: name a queue, or remove the annotation for the queue \"default\""
	} else if msgs := validation.IsDNS1123Subdomain(queue); len(msgs) > 0 {
		msg = "not a Volcano queue name: " + strings.Join(msgs, "; ")
	}
	if msg == "" {
		return nil
	}
	if job != nil && !req.IsRuntime() {
		if _, set := job.Spec.Annotations[QueueAnnotation]; set {
			return field.ErrorList{field.Invalid(field.NewPath("spec", "annotations").Key(QueueAnnotation), queue, msg)}
		}
	}
	return field.ErrorList{runtimeError(req, field.Invalid(field.NewPath("spec", "template", "metadata", "annotations").Key(QueueAnnotation), queue, msg))}
}

// priorityClass is the priority class of the gang, and where the runtime
// sets it.
type priorityClass struct {
	name string
	path *field.Path
}

// priorityClassName returns the priorityClassName of the gang's pod
// templates. The PodGroup has one priority, so the gang's replicatedJobs
// must agree on it; the initializers' priority is theirs.
func priorityClassName(info *framework.Info, pods []*framework.PodSet) (priorityClass, error) {
	tmpl, err := info.TemplateSpec()
	if err != nil {
		return priorityClass{}, err
	}
	var found priorityClass
	for i, rj := range tmpl.Spec.ReplicatedJobs {
		if !inGang(pods, rj.Name) {
			continue
		}
		name := rj.Template.Spec.Template.Spec.PriorityClassName
		if name == "" {
			continue
		}
		path := field.NewPath("spec", "template", "spec", "replicatedJobs").Index(i).Child("template", "spec", "template", "spec", "priorityClassName")
		if found.name != "" && found.name != name {
			return priorityClass{}, field.Invalid(path, name, fmt.Sprintf(
				"the Volcano PodGroup of the trainer step has one priority, and %s is %q: give the trainer step's replicatedJobs the same priorityClassName", found.path, found.name))
		}
		if found.name == "" {
			found = priorityClass{name: name, path: path}
		}
	}
	return found, nil
}

func inGang(pods []*framework.PodSet, name string) bool {
	for _, ps := range pods {
		if ps.Name == name {
			return true
		}
	}
	return false
}

// podSpecOf returns the pod template of a replicatedJob, or an empty one.
func podSpecOf(tmpl *trainer.JobSetTemplateSpec, name string) corev1.PodSpec {
	for _, rj := range tmpl.Spec.ReplicatedJobs {
		if rj.Name == name {
			return rj.Template.Spec.Template.Spec
		}
	}
	return corev1.PodSpec{}
}

// runtimeError is fe, a problem with a field of the runtime, as it is when
// the runtime itself is admitted, else on the TrainJob's spec.runtimeRef,
// the field that chose the runtime, naming the runtime's field.
func runtimeError(req framework.ValidateRequest, fe *field.Error) *field.Error {
	job := req.NewJob
	if job == nil || req.IsRuntime() {
		return fe
	}
	return field.Invalid(field.NewPath("spec", "runtimeRef"), job.Spec.RuntimeRef.Name,
		fmt.Sprintf("the runtime's %s: %s", fe.Field, fe.ErrorBody()))
}

// asFieldError returns err as a field error; errors of the policy already
// are.
func asFieldError(err error) *field.Error {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe
	}
	return field.Invalid(policyPath, "", err.Error())
}
