package coscheduling

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	schedulingv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

const (
	// Name is the plugin's name in the configuration file.
	Name = "Coscheduling"
	// Version is the plugin's own version.
	Version = "v0.1.0"
	// PolicyKey is the podGroupPolicy key the plugin owns.
	PolicyKey = "coscheduling"
	// DefaultScheduleTimeoutSeconds is the PodGroup's scheduleTimeoutSeconds
	// when neither the policy nor the plugin args set one.
	DefaultScheduleTimeoutSeconds int32 = 60
	// PodGroupLabel is the label that puts a pod in a PodGroup; its value is
	// the PodGroup's name (the TrainJob's name).
	PodGroupLabel = schedulingv1alpha1.PodGroupLabel
)

// GVK is the kind of the object the plugin builds: a scheduler-plugins PodGroup.
var GVK = schedulingv1alpha1.SchemeGroupVersion.WithKind("PodGroup")

// Args are the plugin's args in the configuration file. Both are defaults.
type Args struct {
	// ScheduleTimeoutSeconds is the PodGroup's scheduleTimeoutSeconds when
	// the policy leaves it unset or 0. Unset or 0 means 60.
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
	// SchedulerName is the scheduler of the gang's pods, unless the runtime
	// names one. Empty leaves the pods' scheduler alone.
	SchedulerName string `json:"schedulerName,omitempty"`
}

// Coscheduling is the plugin. Create it with New.
type Coscheduling struct {
	args Args
}

var (
	_ framework.Configurable           = (*Coscheduling)(nil)
	_ framework.Validator              = (*Coscheduling)(nil)
	_ framework.PodGroupPolicyEnforcer = (*Coscheduling)(nil)
	_ framework.Builder                = (*Coscheduling)(nil)
)

// New returns the plugin with no args.
func New() framework.Plugin {
	return &Coscheduling{}
}

// Describe says what the plugin is and owns.
func (p *Coscheduling) Describe() framework.Description {
	return framework.Description{
		Name:               Name,
		Version:            Version,
		PodGroupPolicyKeys: []string{PolicyKey},
		Builds:             []schema.GroupVersionKind{GVK},
	}
}

// Configure decodes the args strictly and validates them. Empty args are
// fine.
func (p *Coscheduling) Configure(_ context.Context, raw json.RawMessage) error {
	args := Args{}
	if len(bytes.TrimSpace(raw)) > 0 {
		strict, err := sigsjson.UnmarshalStrict(raw, &args, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
		if err == nil && len(strict) > 0 {
			err = errors.Join(strict...)
		}
		if err != nil {
			return fmt.Errorf("args: %w; Coscheduling takes {scheduleTimeoutSeconds: <integer>, schedulerName: <string>}", err)
		}
	}
	if errs := validateArgs(&args, field.NewPath("args")); len(errs) > 0 {
		return errs.ToAggregate()
	}
	p.args = args
	return nil
}

func validateArgs(a *Args, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t := a.ScheduleTimeoutSeconds; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(path.Child("scheduleTimeoutSeconds"), *t, "must be greater than or equal to 0"))
	}
	if n := a.SchedulerName; n != "" {
		if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("schedulerName"), n, strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// policyPath is where the runtime sets the policy.
var policyPath = field.NewPath("spec", "podGroupPolicy", PolicyKey)

// Validate rejects a negative scheduleTimeoutSeconds and a runtime without a
// trainer step to gang.
func (p *Coscheduling) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	info, newJob := req.Info, req.NewJob
	pol, err := coschedulingPolicy(info)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "podGroupPolicy"), "", err.Error())}, nil
	}
	if pol == nil {
		return nil, nil, nil
	}
	var errs field.ErrorList
	if t := pol.ScheduleTimeoutSeconds; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(policyPath.Child("scheduleTimeoutSeconds"), *t, "must be greater than or equal to 0"))
	}
	if _, err := gang(info); err != nil {
		ref := ""
		if newJob != nil {
			ref = newJob.Spec.RuntimeRef.Name
		}
		errs = append(errs, field.Invalid(field.NewPath("spec", "runtimeRef"), ref, err.Error()))
	}
	return nil, errs, nil
}

// EnforcePodGroupPolicy puts the gang's pods in the TrainJob's PodGroup and,
// when the args name one, gives them their scheduler.
func (p *Coscheduling) EnforcePodGroupPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	pol, err := coschedulingPolicy(info)
	if err != nil || pol == nil {
		return err
	}
	pods, err := gang(info)
	if err != nil {
		return err
	}
	var templateSchedulers map[string]string
	if p.args.SchedulerName != "" {
		if templateSchedulers, err = schedulerNames(info); err != nil {
			return err
		}
	}
	for _, ps := range pods {
		framework.MergeMap(&ps.PodLabels, map[string]string{PodGroupLabel: job.Name})
		if p.args.SchedulerName != "" && ps.SchedulerName == "" && templateSchedulers[ps.Name] == "" {
			ps.SchedulerName = p.args.SchedulerName
		}
	}
	return nil
}

// Build returns the TrainJob's PodGroup.
func (p *Coscheduling) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	pol, err := coschedulingPolicy(info)
	if err != nil || pol == nil {
		return nil, err
	}
	timeout, err := p.scheduleTimeout(pol)
	if err != nil {
		return nil, err
	}
	pods, err := gang(info)
	if err != nil {
		return nil, err
	}
	minMember, minResources, err := gangSize(pods)
	if err != nil {
		return nil, err
	}
	pg := &schedulingv1alpha1.PodGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: GVK.GroupVersion().String(), Kind: GVK.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        job.Name,
			Namespace:   job.Namespace,
			Labels:      maps.Clone(info.Labels),
			Annotations: maps.Clone(info.Annotations),
		},
		Spec: schedulingv1alpha1.PodGroupSpec{
			MinMember:              minMember,
			MinResources:           minResources,
			ScheduleTimeoutSeconds: &timeout,
		},
	}
	u, err := framework.ToUnstructured(pg, GVK)
	if err != nil {
		return nil, err
	}
	// The status belongs to the scheduler; an apply must not claim it.
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return framework.Apply(u), nil
}

// coschedulingPolicy returns the runtime's coscheduling policy, or nil when
// the runtime does not ask for coscheduling.
func coschedulingPolicy(info *framework.Info) (*trainer.CoschedulingPodGroupPolicySource, error) {
	pol, err := info.PodGroupPolicy()
	if err != nil || pol == nil {
		return nil, err
	}
	return pol.Coscheduling, nil
}

// scheduleTimeout is the policy's timeout, else the args' default, else 60.
func (p *Coscheduling) scheduleTimeout(pol *trainer.CoschedulingPodGroupPolicySource) (int32, error) {
	if t := pol.ScheduleTimeoutSeconds; t != nil {
		if *t < 0 {
			return 0, field.Invalid(policyPath.Child("scheduleTimeoutSeconds"), *t, "must be greater than or equal to 0")
		}
		if *t > 0 {
			return *t, nil
		}
	}
	if t := p.args.ScheduleTimeoutSeconds; t != nil && *t > 0 {
		return *t, nil
	}
	return DefaultScheduleTimeoutSeconds, nil
}

// gang returns the PodSets of the trainer step, in order.
func gang(info *framework.Info) ([]*framework.PodSet, error) {
	pods, err := info.Gang()
	if err != nil {
		return nil, fmt.Errorf("podGroupPolicy.%s: %w", PolicyKey, err)
	}
	return pods, nil
}

// gangSize returns the number of pods of the gang and the sum of their
// requests.
func gangSize(pods []*framework.PodSet) (int32, corev1.ResourceList, error) {
	n, res, err := framework.GangSize(pods)
	if err != nil {
		return 0, nil, fmt.Errorf("podGroupPolicy.%s: %w", PolicyKey, err)
	}
	return n, res, nil
}

// schedulerNames returns the schedulerName of each replicatedJob's pod
// template, by replicatedJob name.
func schedulerNames(info *framework.Info) (map[string]string, error) {
	tmpl, err := info.TemplateSpec()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, rj := range tmpl.Spec.ReplicatedJobs {
		out[rj.Name] = rj.Template.Spec.Template.Spec.SchedulerName
	}
	return out, nil
}
