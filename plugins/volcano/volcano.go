package volcano

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

const (
	// Name is the plugin's name in the configuration file.
	Name = "Volcano"
	// Version is the plugin's own version.
	Version = "v0.1.0"
	// PolicyKey is the podGroupPolicy key the plugin owns.
	PolicyKey = "volcano"
	// GroupNameAnnotation puts a pod in a Volcano PodGroup; its value is the
	// PodGroup's name (the TrainJob's name).
	GroupNameAnnotation = volcanov1beta1.KubeGroupNameAnnotationKey
	// QueueAnnotation, on the runtime's template or the TrainJob, names the
	// Volcano queue of the PodGroup.
	QueueAnnotation = volcanov1beta1.QueueNameAnnotationKey
)

// GVK is the kind of the object the plugin builds: a Volcano PodGroup.
var GVK = volcanov1beta1.SchemeGroupVersion.WithKind("PodGroup")

// Args are the plugin's args in the configuration file.
type Args struct {
	// SchedulerName is the scheduler of the gang's pods (usually
	// "volcano"), unless the runtime's pod template or an earlier plugin
	// names one. Empty leaves the pods' scheduler alone.
	SchedulerName string `json:"schedulerName,omitempty"`
}

// Volcano is the plugin. Create it with New.
type Volcano struct {
	args Args
}

var (
	_ framework.Configurable           = (*Volcano)(nil)
	_ framework.Validator              = (*Volcano)(nil)
	_ framework.PodGroupPolicyEnforcer = (*Volcano)(nil)
	_ framework.Builder                = (*Volcano)(nil)
)

// New returns the plugin with no args.
func New() *Volcano {
	return &Volcano{}
}

// Describe says what the plugin is and owns.
func (p *Volcano) Describe() framework.Description {
	return framework.Description{
		Name:               Name,
		Version:            Version,
		PodGroupPolicyKeys: []string{PolicyKey},
		Builds:             []schema.GroupVersionKind{GVK},
	}
}

// Configure decodes the args strictly; empty args are fine.
func (p *Volcano) Configure(_ context.Context, raw json.RawMessage) error {
	args := Args{}
	if s := bytes.TrimSpace(raw); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&args); err != nil {
			return field.Invalid(field.NewPath("args"), string(raw), fmt.Sprintf("%v; the args are {\"schedulerName\": \"volcano\"}", err))
		}
	}
	if n := args.SchedulerName; n != "" {
		if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
			return field.Invalid(field.NewPath("args", "schedulerName"), n, strings.Join(msgs, "; "))
		}
	}
	p.args = args
	return nil
}

// EnforcePodGroupPolicy puts the gang's pods in the TrainJob's PodGroup
// and, when the args name one, gives them their scheduler.
func (p *Volcano) EnforcePodGroupPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	pol, err := volcanoPolicy(info)
	if err != nil || pol == nil {
		return err
	}
	pods, err := gang(info)
	if err != nil {
		return err
	}
	tmpl, err := info.TemplateSpec()
	if err != nil {
		return err
	}
	for _, ps := range pods {
		framework.MergeMap(&ps.PodAnnotations, map[string]string{GroupNameAnnotation: job.Name})
		if p.args.SchedulerName != "" && ps.SchedulerName == "" && podSpecOf(tmpl, ps.Name).SchedulerName == "" {
			ps.SchedulerName = p.args.SchedulerName
		}
	}
	return nil
}

// Build returns the TrainJob's PodGroup.
func (p *Volcano) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	pol, err := volcanoPolicy(info)
	if err != nil || pol == nil {
		return nil, err
	}
	topology, err := networkTopology(pol)
	if err != nil {
		return nil, err
	}
	pods, err := gang(info)
	if err != nil {
		return nil, err
	}
	minMember, minResources, err := framework.GangSize(pods)
	if err != nil {
		return nil, fmt.Errorf("podGroupPolicy.%s: %w", PolicyKey, err)
	}
	priority, err := priorityClassName(info, pods)
	if err != nil {
		return nil, err
	}
	pg := &volcanov1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name, Namespace: job.Namespace},
		Spec: volcanov1beta1.PodGroupSpec{
			MinMember:         minMember,
			Queue:             info.Annotations[QueueAnnotation],
			PriorityClassName: priority.name,
			NetworkTopology:   topology,
		},
	}
	if len(minResources) > 0 {
		pg.Spec.MinResources = &minResources
	}
	// With Info's labels and annotations, and without the status, which is
	// the scheduler's.
	u, err := framework.ToObject(info, pg, GVK)
	if err != nil {
		return nil, err
	}
	return framework.Apply(u), nil
}

// gang returns the PodSets of the trainer step.
func gang(info *framework.Info) ([]*framework.PodSet, error) {
	pods, err := info.Gang()
	if err != nil {
		return nil, fmt.Errorf("podGroupPolicy.%s: %w", PolicyKey, err)
	}
	return pods, nil
}
