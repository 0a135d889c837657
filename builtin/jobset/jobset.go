package jobset

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Name is the plugin's name in the configuration file.
const Name = "JobSet"

// Version is the plugin's own version.
const Version = "v0.1.0"

// Reasons used when a JobSet condition carries none.
const (
	JobSetCompletedReason = "JobSetCompleted"
	JobSetFailedReason    = "JobSetFailed"
)

// GVK is the kind of the object the plugin builds.
var GVK = jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet")

// Plugin is the JobSet plugin. It is stateless.
type Plugin struct{}

var (
	_ framework.Builder        = (*Plugin)(nil)
	_ framework.StatusReporter = (*Plugin)(nil)
	_ framework.Validator      = (*Plugin)(nil)
	_ framework.Watcher        = (*Plugin)(nil)
)

// CacheOmits are the fields of a JobSet that the controller's cache need
// not keep: the pod template of each replicated Job. Neither Status nor
// the controller reads them back (the apply compares the desired-state
// annotation, and an object that must change is applied whole from what
// Build made), and they are most of a JobSet's size: without them each
// cached JobSet, and each copy made of it on every reconcile, is a
// fraction of the size.
var CacheOmits = []string{"spec.replicatedJobs[].template.spec.template"}

// Watch implements framework.Watcher: the JobSets the plugin builds, which
// the controller watches through their owner anyway, without their pod
// templates (CacheOmits).
func (*Plugin) Watch(context.Context) ([]framework.WatchSource, error) {
	return []framework.WatchSource{{Kind: GVK, Mapping: framework.MapByOwner, Omit: CacheOmits}}, nil
}

// New returns the JobSet plugin.
func New() framework.Plugin { return &Plugin{} }

// Describe implements framework.Plugin. The plugin owns no policy key, so
// it takes part in every job.
func (*Plugin) Describe() framework.Description {
	return framework.Description{
		Name:    Name,
		Version: Version,
		Builds:  []schema.GroupVersionKind{GVK},
	}
}

// Build implements framework.Builder: one JobSet named as the TrainJob,
// from Info's template with Info applied.
func (*Plugin) Build(_ context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	js, err := NewJobSet(info, job)
	if err != nil {
		return nil, err
	}
	u, err := framework.ToUnstructured(js, GVK)
	if err != nil {
		return nil, err
	}
	// A typed object converts with empty creationTimestamp and status;
	// they are not ours to apply.
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return []framework.Object{{Unstructured: u, Live: liveFields(elasticStep(info, js), job)}}, nil
}

// NewJobSet returns the typed JobSet that Build returns. It reads Info and
// the TrainJob's name, namespace and suspend, and changes neither.
func NewJobSet(info *framework.Info, job *trainer.TrainJob) (*jobsetv1alpha2.JobSet, error) {
	// TemplateSpec decodes a fresh copy: nothing below aliases Info.Template.
	tmpl, err := info.TemplateSpec()
	if err != nil {
		return nil, err
	}
	js := &jobsetv1alpha2.JobSet{
		TypeMeta: metav1.TypeMeta{APIVersion: GVK.GroupVersion().String(), Kind: GVK.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        job.Name,
			Namespace:   job.Namespace,
			Labels:      tmpl.ObjectMeta.Labels,
			Annotations: tmpl.ObjectMeta.Annotations,
		},
		Spec: tmpl.Spec,
	}
	framework.MergeMap(&js.Labels, info.Labels)
	framework.MergeMap(&js.Annotations, info.Annotations)

	for k := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[k]
		ps := info.PodSet(rj.Name)
		if ps == nil {
			continue
		}
		applyPodSet(rj, ps)
	}
	js.Spec.Suspend = ptr.To(job.IsSuspended())
	elastic, err := markElastic(js, info)
	if err != nil {
		return nil, err
	}
	if info.RestartPolicy != nil {
		if errs := applyRestartPolicy(js, info.RestartPolicy, elastic); len(errs) > 0 {
			return nil, errs.ToAggregate()
		}
	}
	return js, nil
}

// Validate implements framework.Validator: the job's restart policy must
// translate into the runtime's JobSet without a conflict with what the
// template already says. The errors name the fields of both.
func (*Plugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	info := req.Info
	if info.RestartPolicy == nil {
		return nil, nil, nil
	}
	tmpl, err := info.TemplateSpec()
	if err != nil {
		return nil, field.ErrorList{field.Invalid(templateSpecPath, "", err.Error())}, nil
	}
	// Whether a step is elastic changes an action, never a conflict.
	return nil, applyRestartPolicy(&jobsetv1alpha2.JobSet{Spec: tmpl.Spec}, info.RestartPolicy, ""), nil
}

// applyPodSet writes a PodSet into its replicatedJob. Everything taken from
// the PodSet is deep-copied so that the JobSet never aliases Info.
func applyPodSet(rj *jobsetv1alpha2.ReplicatedJob, ps *framework.PodSet) {
	rj.Replicas = ps.Replicas
	jobSpec := &rj.Template.Spec
	jobSpec.Parallelism = ptr.To(ps.Count)
	jobSpec.Completions = ptr.To(ps.Count)

	pod := &jobSpec.Template
	pod.Spec.InitContainers = applyContainers(pod.Spec.InitContainers, ps.InitContainers)
	pod.Spec.Containers = applyContainers(pod.Spec.Containers, ps.Containers)
	pod.Spec.Volumes = nil
	for _, v := range ps.Volumes {
		pod.Spec.Volumes = append(pod.Spec.Volumes, *v.DeepCopy())
	}
	framework.MergeMap(&pod.Labels, ps.PodLabels)
	framework.MergeMap(&pod.Annotations, ps.PodAnnotations)
	if ps.SchedulerName != "" {
		pod.Spec.SchedulerName = ps.SchedulerName
	}
}

// applyContainers overwrites the template's containers from the Info
// containers of the same name, field by field, and appends the Info
// containers that the template lacks, in Info order.
func applyContainers(tmpl []corev1.Container, info []framework.Container) []corev1.Container {
	for _, ic := range info {
		i := slices.IndexFunc(tmpl, func(c corev1.Container) bool { return c.Name == ic.Name })
		if i < 0 {
			tmpl = append(tmpl, corev1.Container{Name: ic.Name})
			i = len(tmpl) - 1
		}
		setContainer(&tmpl[i], &ic)
	}
	return tmpl
}

func setContainer(dst *corev1.Container, src *framework.Container) {
	// Round-trip through a corev1.Container to reuse its generated deep copy.
	c := (&corev1.Container{
		Image:        src.Image,
		Command:      src.Command,
		Args:         src.Args,
		Env:          src.Env,
		EnvFrom:      src.EnvFrom,
		Ports:        src.Ports,
		VolumeMounts: src.VolumeMounts,
		Resources:    src.Resources,
	}).DeepCopy()
	dst.Image = c.Image
	dst.Command = c.Command
	dst.Args = c.Args
	dst.Env = c.Env
	dst.EnvFrom = c.EnvFrom
	dst.Ports = c.Ports
	dst.VolumeMounts = c.VolumeMounts
	dst.Resources = c.Resources
}

// Status implements framework.StatusReporter: the owned JobSet named as
// the TrainJob gives the TrainJob's Running, Complete and Failed conditions
// and its jobsStatus, and, with info, the Info it was built from, the size
// of an elastic job. It returns nil while the JobSet does not exist.
func (*Plugin) Status(_ context.Context, info *framework.Info, job *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	u := findJobSet(job, owned)
	if u == nil {
		return nil, nil
	}
	js := &jobsetv1alpha2.JobSet{}
	if err := framework.FromUnstructured(u, js); err != nil {
		return nil, fmt.Errorf("decoding JobSet %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	status := &framework.StatusReport{}
	for _, m := range []struct {
		from   jobsetv1alpha2.JobSetConditionType
		to     string
		reason string
	}{
		{jobsetv1alpha2.JobSetCompleted, trainer.TrainJobComplete, JobSetCompletedReason},
		{jobsetv1alpha2.JobSetFailed, trainer.TrainJobFailed, JobSetFailedReason},
	} {
		c := meta.FindStatusCondition(js.Status.Conditions, string(m.from))
		if c == nil || c.Status != metav1.ConditionTrue {
			continue
		}
		reason, message := c.Reason, c.Message
		if reason == "" {
			reason = m.reason
		}
		if m.to == trainer.TrainJobFailed {
			reason, message = failedReason(js, reason, message)
		}
		status.Conditions = append(status.Conditions, metav1.Condition{
			Type:               m.to,
			Status:             metav1.ConditionTrue,
			ObservedGeneration: job.Generation,
			LastTransitionTime: c.LastTransitionTime,
			Reason:             reason,
			Message:            message,
		})
	}
	status.Conditions = append(status.Conditions, runningCondition(js, job, status.Conditions))
	status.Restarts = restartStatus(js, job.Status.Restarts)
	status.Nodes = nodesStatus(js, info, job)
	for _, rs := range js.Status.ReplicatedJobsStatus {
		status.JobsStatus = append(status.JobsStatus, trainer.JobStatus{
			Name:      rs.Name,
			Ready:     ptr.To(rs.Ready),
			Succeeded: ptr.To(rs.Succeeded),
			Failed:    ptr.To(rs.Failed),
			Active:    ptr.To(rs.Active),
			Suspended: ptr.To(rs.Suspended),
		})
	}
	return status, nil
}

// runningCondition says whether the JobSet's pods run: True while it is
// resumed, not finished, and at least one of its Jobs has all its pods
// ready or has succeeded (JobSet counts a Job ready when its ready and
// succeeded pods are all it expects). finished are the Complete or Failed
// conditions the JobSet gave.
func runningCondition(js *jobsetv1alpha2.JobSet, job *trainer.TrainJob, finished []metav1.Condition) metav1.Condition {
	c := metav1.Condition{Type: trainer.TrainJobRunning, Status: metav1.ConditionFalse, ObservedGeneration: job.Generation}
	var started int32
	for _, rs := range js.Status.ReplicatedJobsStatus {
		started += rs.Ready + rs.Succeeded
	}
	switch {
	case meta.IsStatusConditionTrue(finished, trainer.TrainJobFailed):
		c.Reason, c.Message = trainer.TrainJobFailedReason, "The TrainJob has failed"
	case meta.IsStatusConditionTrue(finished, trainer.TrainJobComplete):
		c.Reason, c.Message = trainer.TrainJobCompletedReason, "The TrainJob has completed"
	case ptr.Deref(js.Spec.Suspend, false) || meta.IsStatusConditionTrue(js.Status.Conditions, string(jobsetv1alpha2.JobSetSuspended)):
		c.Reason, c.Message = trainer.TrainJobSuspendedReason, "The TrainJob is suspended"
	case started > 0:
		c.Status = metav1.ConditionTrue
		c.Reason, c.Message = trainer.TrainJobPodsRunningReason, "The TrainJob's pods are running"
	default:
		c.Reason, c.Message = trainer.TrainJobPodsPendingReason, "No Job of the TrainJob has all its pods running yet"
	}
	return c
}

// findJobSet returns the owned JobSet named as the TrainJob, in its
// namespace, or nil.
func findJobSet(job *trainer.TrainJob, owned []*unstructured.Unstructured) *unstructured.Unstructured {
	for _, u := range owned {
		if u == nil {
			continue
		}
		gvk := u.GroupVersionKind()
		if gvk.Group != GVK.Group || gvk.Kind != GVK.Kind {
			continue
		}
		if u.GetName() != job.Name {
			continue
		}
		if ns := u.GetNamespace(); ns != "" && job.Namespace != "" && ns != job.Namespace {
			continue
		}
		return u
	}
	return nil
}
