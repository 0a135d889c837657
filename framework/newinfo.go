package framework

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// StorageURIEnv is the variable through which an initializer receives its
// storageUri.
const StorageURIEnv = "STORAGE_URI"

// Container names of the initializer steps.
const (
	DatasetInitializerContainer = "dataset-initializer"
	ModelInitializerContainer   = "model-initializer"
)

// OverheadLookup returns the pod overhead of a RuntimeClass (its
// overhead.podFixed), nil when it has none.
type OverheadLookup func(runtimeClassName string) (corev1.ResourceList, error)

// InfoOption changes how NewInfo builds an Info.
type InfoOption func(*infoOptions)

type infoOptions struct {
	overhead OverheadLookup
}

// WithRuntimeClassOverhead resolves the overhead of PodSets whose template
// names a RuntimeClass and sets no overhead itself, as the RuntimeClass
// admission controller does for their pods, so that per-pod requests count
// it the way the scheduler will.
func WithRuntimeClassOverhead(lookup OverheadLookup) InfoOption {
	return func(o *infoOptions) { o.overhead = lookup }
}

// NewInfo builds the Info of a TrainJob from its runtime: the template after
// the TrainJob's runtimePatches, one PodSet per replicatedJob with the
// TrainJob's trainer and initializer overrides applied, and the derived
// values (endpoints, per-pod requests). ML plugins then set the trainer's
// count and environment.
func NewInfo(job *trainer.TrainJob, spec *trainer.TrainingRuntimeSpec, opts ...InfoOption) (*Info, error) {
	var o infoOptions
	for _, opt := range opts {
		opt(&o)
	}
	tmpl, raw, err := PatchedTemplate(&spec.Template, job.Spec.RuntimePatches)
	if err != nil {
		return nil, &InvalidJobError{err}
	}
	info := &Info{Version: InfoVersion, Template: raw}
	MergeMap(&info.Labels, tmpl.ObjectMeta.Labels)
	MergeMap(&info.Labels, job.Spec.Labels)
	MergeMap(&info.Annotations, tmpl.ObjectMeta.Annotations)
	MergeMap(&info.Annotations, job.Spec.Annotations)
	info.RestartPolicy = spec.RestartPolicy.WithOverride(job.Spec.RestartPolicy)

	if spec.MLPolicy != nil {
		if info.RuntimePolicy.MLPolicy, err = json.Marshal(spec.MLPolicy); err != nil {
			return nil, fmt.Errorf("encoding mlPolicy: %w", err)
		}
	}
	if spec.PodGroupPolicy != nil {
		if info.RuntimePolicy.PodGroupPolicy, err = json.Marshal(spec.PodGroupPolicy); err != nil {
			return nil, fmt.Errorf("encoding podGroupPolicy: %w", err)
		}
	}

	for _, rj := range tmpl.Spec.ReplicatedJobs {
		podSpec := rj.Template.Spec.Template.Spec
		ps := PodSet{
			Name:           rj.Name,
			AncestorStep:   rj.Template.Labels[trainer.AncestorStepLabel],
			Replicas:       max(rj.Replicas, 1),
			Count:          ptr.Deref(rj.Template.Spec.Parallelism, 1),
			InitContainers: containersOf(podSpec.InitContainers),
			Containers:     containersOf(podSpec.Containers),
			Volumes:        podSpec.Volumes,
			Overhead:       podSpec.Overhead,
		}
		if podSpec.RuntimeClassName != nil {
			ps.RuntimeClassName = *podSpec.RuntimeClassName
		}
		if ps.RuntimeClassName != "" && ps.Overhead == nil && o.overhead != nil {
			if ps.Overhead, err = o.overhead(ps.RuntimeClassName); err != nil {
				return nil, fmt.Errorf("replicatedJob %q: RuntimeClass %q: %w", rj.Name, ps.RuntimeClassName, err)
			}
		}
		info.PodSets = append(info.PodSets, ps)
	}
	markLegacyTrainer(info)
	if err := applyTrainJobOverrides(info, job); err != nil {
		return nil, err
	}
	// The template is at hand: no need to decode what was just encoded.
	if err := refreshDerived(info, job.Name, tmpl); err != nil {
		return nil, err
	}
	return info, nil
}

// PatchedTemplate applies runtimePatches, in order, to a runtime template
// with strategic merge and returns the result typed and as JSON.
func PatchedTemplate(tmpl *trainer.JobSetTemplateSpec, patches []trainer.RuntimePatch) (*trainer.JobSetTemplateSpec, json.RawMessage, error) {
	raw, err := json.Marshal(tmpl)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the runtime template: %w", err)
	}
	if !slices.ContainsFunc(patches, hasTemplatePatch) {
		return tmpl.DeepCopy(), raw, nil
	}
	for i, p := range patches {
		if !hasTemplatePatch(p) {
			continue
		}
		raw, err = strategicMergeTemplate(raw, p.TrainingRuntimeSpec.Template.Raw)
		if err == nil {
			// A patch can merge cleanly yet leave a template that does
			// not decode; say which patch did it.
			err = json.Unmarshal(raw, &trainer.JobSetTemplateSpec{})
		}
		if err != nil {
			path := field.NewPath("spec", "runtimePatches").Index(i).Child("trainingRuntimeSpec", "template")
			return nil, nil, fmt.Errorf("%s (manager %s): %w", path, p.Manager, err)
		}
	}
	out := &trainer.JobSetTemplateSpec{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, nil, fmt.Errorf("decoding the patched runtime template: %w", err)
	}
	return out, raw, nil
}

func hasTemplatePatch(p trainer.RuntimePatch) bool {
	return p.TrainingRuntimeSpec != nil && p.TrainingRuntimeSpec.Template != nil && len(p.TrainingRuntimeSpec.Template.Raw) > 0
}

func containersOf(cs []corev1.Container) []Container {
	out := make([]Container, 0, len(cs))
	for _, c := range cs {
		out = append(out, Container{
			Name:         c.Name,
			Image:        c.Image,
			Command:      c.Command,
			Args:         c.Args,
			Env:          c.Env,
			EnvFrom:      c.EnvFrom,
			Ports:        c.Ports,
			VolumeMounts: c.VolumeMounts,
			Resources:    c.Resources,
		})
	}
	return out
}

// markLegacyTrainer gives the trainer step to the replicatedJob named
// "node" or "trainer-node" when no replicatedJob carries the label, so that
// runtimes written before the label keep working.
func markLegacyTrainer(info *Info) {
	if info.TrainerPodSet() != nil {
		return
	}
	for _, name := range legacyTrainerJobNames {
		if ps := info.PodSet(name); ps != nil && ps.AncestorStep == "" {
			ps.AncestorStep = trainer.TrainerStep
			return
		}
	}
}

func applyTrainJobOverrides(info *Info, job *trainer.TrainJob) error {
	if t := job.Spec.Trainer; t != nil {
		_, c, err := info.Trainer()
		if err != nil {
			return field.Invalid(field.NewPath("spec", "trainer"), "", err.Error())
		}
		if t.Image != nil {
			c.Image = *t.Image
		}
		// Copies: plugins change Info, and must never change the TrainJob.
		if t.Command != nil {
			c.Command = slices.Clone(t.Command)
		}
		if t.Args != nil {
			c.Args = slices.Clone(t.Args)
		}
		if t.ResourcesPerNode != nil {
			c.Resources = *t.ResourcesPerNode.DeepCopy()
		}
	}
	if in := job.Spec.Initializer; in != nil {
		if d := in.Dataset; d != nil {
			applyInitializer(info, trainer.DatasetInitializerStep, DatasetInitializerContainer, d.StorageUri, d.Env, d.SecretRef)
		}
		if m := in.Model; m != nil {
			applyInitializer(info, trainer.ModelInitializerStep, ModelInitializerContainer, m.StorageUri, m.Env, m.SecretRef)
		}
	}
	return nil
}

func applyInitializer(info *Info, step, container string, uri *string, env []corev1.EnvVar, secret *corev1.LocalObjectReference) {
	for _, ps := range info.PodSetsOfStep(step) {
		c := ps.MainContainer(container)
		if c == nil {
			continue
		}
		if uri != nil {
			c.UpsertEnv(corev1.EnvVar{Name: StorageURIEnv, Value: *uri})
		}
		for _, e := range env {
			c.UpsertEnv(*e.DeepCopy())
		}
		if secret != nil {
			c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: *secret}})
		}
	}
}

// RefreshDerived recomputes what Info derives from its PodSets: the pods'
// DNS names and the resources one pod requests. The cycle calls it after
// the ML policy phase, which may change counts and containers.
func RefreshDerived(info *Info, jobName string) error {
	tmpl, err := info.TemplateSpec()
	if err != nil {
		return err
	}
	return refreshDerived(info, jobName, tmpl)
}

// refreshDerived is RefreshDerived with the template decoded; it only
// reads tmpl.
func refreshDerived(info *Info, jobName string, tmpl *trainer.JobSetTemplateSpec) error {
	// The JobSet's headless service is named as the JobSet, unless its
	// network names another subdomain.
	subdomain := jobName
	if n := tmpl.Spec.Network; n != nil && n.Subdomain != "" {
		subdomain = n.Subdomain
	}
	for k := range info.PodSets {
		ps := &info.PodSets[k]
		if err := checkPods(ps); err != nil {
			return err
		}
		ps.Endpoints = make([]string, 0, ps.Pods())
		for r := int32(0); r < ps.Replicas; r++ {
			for p := int32(0); p < ps.Count; p++ {
				ps.Endpoints = append(ps.Endpoints, fmt.Sprintf("%s-%s-%d-%d.%s", jobName, ps.Name, r, p, subdomain))
			}
		}
		var podSpec corev1.PodSpec
		for _, rj := range tmpl.Spec.ReplicatedJobs {
			if rj.Name == ps.Name {
				podSpec = *rj.Template.Spec.Template.Spec.DeepCopy()
			}
		}
		podSpec.Containers = withResources(podSpec.Containers, ps.Containers)
		podSpec.InitContainers = withResources(podSpec.InitContainers, ps.InitContainers)
		podSpec.Overhead = ps.Overhead
		ps.SinglePodRequests = resourcehelper.PodRequests(&corev1.Pod{Spec: podSpec}, resourcehelper.PodResourcesOptions{})
	}
	return nil
}

// MaxPodSetPods bounds the pods of one PodSet, replicas × count. Info
// lists every pod's DNS name, and Kubernetes caps the parallelism of an
// Indexed Job, which each replicatedJob of a trainer step is, at 100000.
const MaxPodSetPods = 100000

// checkPods refuses a PodSet whose count is negative or whose pods are
// more than MaxPodSetPods (replicas × count, computed without overflow).
func checkPods(ps *PodSet) error {
	if ps.Replicas < 0 || ps.Count < 0 {
		return &InvalidJobError{fmt.Errorf("replicatedJob %q: %d replicas of %d pods: neither may be negative", ps.Name, ps.Replicas, ps.Count)}
	}
	if pods := int64(ps.Replicas) * int64(ps.Count); pods > MaxPodSetPods {
		return &InvalidJobError{fmt.Errorf("replicatedJob %q: %d replicas of %d pods make %d pods; at most %d pods per replicatedJob", ps.Name, ps.Replicas, ps.Count, pods, MaxPodSetPods)}
	}
	return nil
}

// withResources returns the template's containers with the resources of
// the Info containers of the same name; an Info container that the template
// lacks is added, so its requests count too.
func withResources(tmpl []corev1.Container, info []Container) []corev1.Container {
	out := make([]corev1.Container, 0, len(info))
	for _, c := range info {
		tc := corev1.Container{Name: c.Name}
		for _, t := range tmpl {
			if t.Name == c.Name {
				tc = t
			}
		}
		tc.Resources = *c.Resources.DeepCopy()
		// The API server defaults a missing request to its limit, and the
		// scheduler counts the result: GPUs are often given as limits only.
		for name, limit := range tc.Resources.Limits {
			if _, ok := tc.Resources.Requests[name]; !ok {
				if tc.Resources.Requests == nil {
					tc.Resources.Requests = corev1.ResourceList{}
				}
				tc.Resources.Requests[name] = limit
			}
		}
		out = append(out, tc)
	}
	return out
}
