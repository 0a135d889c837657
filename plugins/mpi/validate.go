package mpi

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

var (
	mpiPath      = field.NewPath("spec", "mlPolicy", PolicyKey)
	jobNodesPath = field.NewPath("spec", "trainer", "numNodes")
	jobProcsPath = field.NewPath("spec", "trainer", "numProcPerNode")
)

// policy is the runtime's mlPolicy.mpi with Kubeflow Trainer's defaults.
type policy struct {
	numProcPerNode    int32
	implementation    string
	sshAuthMountPath  string
	runLauncherAsNode bool
}

// plan is what the plugin makes of a job, the same in every phase: the
// policy, the launcher (the trainer step) and the workers with their main
// containers, the number of workers, a node's resources and its slots.
type plan struct {
	policy
	launcher, worker   *framework.PodSet
	launcherC, workerC *framework.Container
	workers, slots     int32
	nodeResources      corev1.ResourceRequirements
}

// Validate rejects what the plugin cannot run; see the package doc.
func (plugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	_, errs := check(req)
	return nil, errs, nil
}

// planOf returns the job's plan, nil when the runtime sets no mpi key.
// Enforce and Build refuse what Validate rejects: admission may have been
// skipped (the webhook was down), or the runtime changed since.
func planOf(info *framework.Info, job *trainer.TrainJob) (*plan, error) {
	p, errs := check(framework.ValidateRequest{Kind: framework.ValidateTrainJob, Info: info, NewJob: job})
	if len(errs) > 0 {
		return nil, errors.Join(errs.ToAggregate().Errors()...)
	}
	return p, nil
}

// check returns the job's plan, or what is wrong with the runtime and the
// TrainJob, each error naming its field.
func check(req framework.ValidateRequest) (*plan, field.ErrorList) {
	info, job := req.Info, req.NewJob
	ml, err := info.MLPolicy()
	if err != nil || ml == nil || ml.MPI == nil {
		if err != nil {
			return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "mlPolicy"), "", err.Error())}
		}
		return nil, nil
	}
	p := &plan{policy: policy{
		numProcPerNode:    ptr.Deref(ml.MPI.NumProcPerNode, DefaultNumProcPerNode),
		implementation:    ptr.Deref(ml.MPI.MPIImplementation, DefaultImplementation),
		sshAuthMountPath:  ptr.Deref(ml.MPI.SSHAuthMountPath, DefaultSSHAuthMountPath),
		runLauncherAsNode: ptr.Deref(ml.MPI.RunLauncherAsNode, false),
	}}
	var errs field.ErrorList
	if !slices.Contains(Implementations, p.implementation) {
		errs = append(errs, field.NotSupported(mpiPath.Child("mpiImplementation"), p.implementation, Implementations))
	}
	if s := p.sshAuthMountPath; !path.IsAbs(s) || path.Clean(s) == HostfileDir {
		errs = append(errs, field.Invalid(mpiPath.Child("sshAuthMountPath"), s, "must be an absolute path other than "+HostfileDir+", where the launcher's hostfile is mounted"))
	}
	if trainerErrs := req.TrainerErrors(); len(trainerErrs) > 0 {
		errs = append(errs, trainerErrs...)
	} else if err := p.findPods(info); err != nil {
		errs = append(errs, req.TemplateError(err.Error()))
	}
	n, err := info.NumNodes(job)
	var fe *field.Error
	switch {
	case errors.As(err, &fe):
		errs = append(errs, fe)
	case err != nil:
		errs = append(errs, field.Invalid(jobNodesPath, "", err.Error()))
	case p.runLauncherAsNode && n < 2 && !req.IsRuntime():
		// A runtime's default of 1 is fine (Kubeflow's deepspeed-distributed
		// ships it): the TrainJob says how many nodes it runs on.
		errs = append(errs, field.Invalid(jobNodesPath, n, `must be at least 2: the runtime runs the MPI launcher as a node (mlPolicy.mpi.runLauncherAsNode), so one node is the launcher and the replicatedJob "node" runs the others`))
	}
	p.workers = n
	if p.runLauncherAsNode {
		p.workers--
	}
	if p.workerC != nil {
		p.nodeResources = p.workerC.Resources
	}
	if t := job.Spec.Trainer; t != nil && t.ResourcesPerNode != nil {
		p.nodeResources = *t.ResourcesPerNode.DeepCopy()
	}
	if err := p.setSlots(job); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, framework.RejectReservedEnv(job, Name, envNames(p.implementation)...)...)
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// findPods finds the launcher and the workers, each with its main
// container, in a runtime that has a trainer step.
func (p *plan) findPods(info *framework.Info) error {
	var err error
	if p.launcher, p.launcherC, err = info.Trainer(); err != nil {
		return err
	}
	if p.worker = info.PodSet(WorkerJob); p.worker == nil || p.worker == p.launcher {
		return fmt.Errorf(`the MPI workers run in a replicatedJob named %q besides the launcher %q (the trainer step, labelled %s: %s); the runtime has none`,
			WorkerJob, p.launcher.Name, trainer.AncestorStepLabel, trainer.TrainerStep)
	}
	if p.workerC = p.worker.TrainerContainer(); p.workerC == nil {
		return fmt.Errorf(`replicatedJob %q of the MPI workers has no main container: name it "node", or give the pod a single container`, WorkerJob)
	}
	return nil
}

// setSlots sets the number of MPI processes per node: the TrainJob's
// numProcPerNode (an integer, or "auto" or "gpu": the GPUs of a node, 1
// without), else the runtime's, which becomes the GPU count when it is 1
// and a node has more GPUs, as in Kubeflow Trainer.
func (p *plan) setSlots(job *trainer.TrainJob) *field.Error {
	gpus := int32(min(framework.GPUCount(p.nodeResources), 1<<30))
	if t := job.Spec.Trainer; t != nil && t.NumProcPerNode != nil {
		v := *t.NumProcPerNode
		if v.Type == intstr.String && (v.StrVal == "auto" || v.StrVal == "gpu") {
			p.slots = max(gpus, 1)
			return nil
		}
		n, err := strconv.ParseInt(v.String(), 10, 32)
		if err != nil || n < 1 {
			return field.Invalid(jobProcsPath, v.String(), `must be a positive integer, "auto" or "gpu" (the GPUs of one node, 1 without GPUs)`)
		}
		p.slots = int32(n)
		return nil
	}
	if p.numProcPerNode < 1 {
		return field.Invalid(mpiPath.Child("numProcPerNode"), p.numProcPerNode, "must be at least 1")
	}
	p.slots = p.numProcPerNode
	if p.slots == 1 && gpus > 1 {
		p.slots = gpus
	}
	return nil
}
