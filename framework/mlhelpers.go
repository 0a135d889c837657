package framework

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// What every ML framework plugin does to the trainer step: count its pods,
// give it the TrainJob's environment, tell each pod its rank and where the
// first pod is. Plugins call these instead of writing their own copy.

// TrainerPort is the port on which the first trainer pod serves what the
// other pods connect to (torchrun's rendezvous, JAX's coordinator,
// XGBoost's tracker): the one Kubeflow Trainer uses for every framework,
// so that network policies and images written for it keep working.
const TrainerPort int32 = 29500

// CompletionIndexFieldPath is the downward-API path of a pod's Job
// completion index, its rank within its replicatedJob.
const CompletionIndexFieldPath = "metadata.annotations['" + batchv1.JobCompletionIndexAnnotation + "']"

// CompletionIndexEnv returns a variable named name that holds the pod's
// Job completion index (0 for the first pod of the replicatedJob).
func CompletionIndexEnv(name string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: CompletionIndexFieldPath},
	}}
}

// NumNodes is the trainer step's pod count for a job: the TrainJob's
// spec.trainer.numNodes, else the runtime's mlPolicy.numNodes, else 1.
func (i *Info) NumNodes(job *trainer.TrainJob) (int32, error) {
	policy, err := i.MLPolicy()
	if err != nil {
		return 0, err
	}
	return TrainerNumNodes(job, policy)
}

// SetupTrainer does what every ML plugin does first: it finds the trainer
// step and its main container, sets the step's pod count to the job's node
// count (NumNodes) and merges the TrainJob's spec.trainer.env into the
// container (MergeTrainerEnv). It returns the step, its container and the
// count.
func (i *Info) SetupTrainer(job *trainer.TrainJob) (*PodSet, *Container, int32, error) {
	// An in-process caller may hand over nothing; an error is better than
	// a panic in the controller's process.
	if i == nil {
		return nil, nil, 0, errors.New("no Info to set up the trainer step in")
	}
	policy, err := i.MLPolicy()
	if err != nil {
		return nil, nil, 0, err
	}
	return i.SetupTrainerWith(job, policy)
}

// SetupTrainerWith is SetupTrainer for a plugin that has decoded the
// runtime's mlPolicy already (MLPolicy): it is not decoded again.
func (i *Info) SetupTrainerWith(job *trainer.TrainJob, policy *trainer.MLPolicy) (*PodSet, *Container, int32, error) {
	if i == nil {
		return nil, nil, 0, errors.New("no Info to set up the trainer step in")
	}
	ps, c, err := i.Trainer()
	if err != nil {
		return nil, nil, 0, err
	}
	n, err := TrainerNumNodes(job, policy)
	if err != nil {
		return nil, nil, 0, err
	}
	ps.Count = n
	MergeTrainerEnv(c, job)
	return ps, c, n, nil
}

// MergeTrainerEnv merges the TrainJob's spec.trainer.env into c: a variable
// of the same name replaces the runtime's in place, the others are
// appended in the TrainJob's order. The values are copies.
func MergeTrainerEnv(c *Container, job *trainer.TrainJob) {
	if job == nil || job.Spec.Trainer == nil {
		return
	}
	for _, v := range job.Spec.Trainer.Env {
		c.UpsertEnv(*v.DeepCopy())
	}
}

// TrainerErrors is for Validate: the error of a runtime that has no
// trainer step or no trainer container (see Info.Trainer), which every ML
// plugin needs, as a field error of the object being admitted, so that
// the runtime is rejected on admission rather than its TrainJobs failing
// later (TemplateError says on which field). A nil Info has nothing to
// check.
func (r ValidateRequest) TrainerErrors() field.ErrorList {
	if r.Info == nil {
		return nil
	}
	_, _, err := r.Info.Trainer()
	if err == nil {
		return nil
	}
	return field.ErrorList{r.TemplateError(err.Error())}
}

// TemplateError is a problem with the runtime's template (msg says what,
// and how to fix the runtime) as a field error of the object being
// admitted: spec.template.spec.replicatedJobs when a runtime is validated,
// else the TrainJob's spec.runtimeRef, the field that chose that runtime.
//
//	spec.runtimeRef: Invalid value: "mpi": the MPI workers run in a replicatedJob named "node" besides the launcher; the runtime has none
func (r ValidateRequest) TemplateError(msg string) *field.Error {
	if r.IsRuntime() || r.NewJob == nil {
		return field.Required(field.NewPath("spec", "template", "spec", "replicatedJobs"), msg)
	}
	return field.Invalid(field.NewPath("spec", "runtimeRef"), r.NewJob.Spec.RuntimeRef.Name, msg)
}

// ReservedEnvErrors returns one Forbidden error, on
// spec.trainer.env[i].name, for each variable of the TrainJob's
// spec.trainer.env that a plugin sets itself: reserved reports whether a
// name is one, and owner names the plugin in the message, which also lists
// what the plugin sets (sets).
func ReservedEnvErrors(job *trainer.TrainJob, owner string, sets []string, reserved func(name string) bool) field.ErrorList {
	if job == nil || job.Spec.Trainer == nil {
		return nil
	}
	var errs field.ErrorList
	path := field.NewPath("spec", "trainer", "env")
	for i, v := range job.Spec.Trainer.Env {
		if reserved(v.Name) {
			errs = append(errs, field.Forbidden(path.Index(i).Child("name"),
				fmt.Sprintf("%s is set by the %s plugin, which sets %s itself; remove it from spec.trainer.env", v.Name, owner, strings.Join(sets, ", "))))
		}
	}
	return errs
}

// RejectReservedEnv is for Validate: a Forbidden field error on
// spec.trainer.env[i].name for every variable of the TrainJob's
// spec.trainer.env whose name is one of names, the variables the plugin
// sets itself. plugin names the plugin in the message:
//
//	spec.trainer.env[0].name: Forbidden: DMLC_TASK_ID is set by the XGBoost plugin, which sets DMLC_TRACKER_URI, DMLC_TASK_ID itself; remove it from spec.trainer.env
func RejectReservedEnv(job *trainer.TrainJob, plugin string, names ...string) field.ErrorList {
	return ReservedEnvErrors(job, plugin, names, ReservedEnvNames(names...))
}

// ReservedEnvNames returns a ReservedEnvErrors check for exactly these
// names.
func ReservedEnvNames(names ...string) func(string) bool {
	return func(name string) bool { return slices.Contains(names, name) }
}

// FirstEndpoint returns the DNS name of the PodSet's first pod (replica 0,
// completion index 0), where frameworks run their coordinator, or an error
// when the PodSet has no pod.
func (p *PodSet) FirstEndpoint() (string, error) {
	if len(p.Endpoints) == 0 {
		return "", fmt.Errorf("replicatedJob %q has no pod, so it has no first pod to coordinate the others", p.Name)
	}
	return p.Endpoints[0], nil
}

// GPUCount is the number of GPUs of one node: the sum of the resources
// whose name ends in "gpu" (nvidia.com/gpu, amd.com/gpu, ...), from the
// limits when they name one, else from the requests.
func GPUCount(res corev1.ResourceRequirements) int64 {
	if n, ok := sumGPUs(res.Limits); ok {
		return n
	}
	n, _ := sumGPUs(res.Requests)
	return n
}

// sumGPUs adds up the GPU resources of a list; a sum does not depend on
// the order of the map.
func sumGPUs(l corev1.ResourceList) (n int64, found bool) {
	for name, q := range l {
		if strings.HasSuffix(string(name), "gpu") {
			n += q.Value()
			found = true
		}
	}
	return n, found
}
