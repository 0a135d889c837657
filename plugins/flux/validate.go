package flux

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

var (
	fluxPath     = field.NewPath("spec", "mlPolicy", PolicyKey)
	jobProcsPath = field.NewPath("spec", "trainer", "numProcPerNode")
	jobEnvPath   = field.NewPath("spec", "trainer", "env")
	jobNamePath  = field.NewPath("metadata", "name")
)

// maxJobNameLength keeps the volume named as the scripts' ConfigMap,
// <trainjob>-flux-entrypoint, within a volume name's 63 characters.
const maxJobNameLength = 63 - len(EntrypointConfigMapSuffix)

// networkDevice is what a Linux interface name may be: the bind address
// is written into the brokers' configuration as it is.
var networkDevice = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,15}$`)

// settings are what the runtime's trainer container and the TrainJob's
// env say about Flux, with Kubeflow Trainer's defaults.
type settings struct {
	viewImage, networkDevice, queuePolicy string
}

// plan is what the plugin makes of a job, the same in every phase.
type plan struct {
	ps *framework.PodSet
	c  *framework.Container
	settings
	nodes, tasksPerNode int32
	// gpusPerNode and gpusPerTask: 0 without GPUs.
	gpusPerNode, gpusPerTask int64
	// command is the training command, as one string, that the entrypoint
	// runs under flux run; args are the container's args after it.
	command string
	args    []string
}

// Validate rejects what the plugin cannot run; see the package doc.
func (plugin) Validate(_ context.Context, req framework.ValidateRequest) ([]string, field.ErrorList, error) {
	_, errs := check(req)
	return nil, errs, nil
}

// planOf returns the job's plan, nil when the runtime sets no flux key.
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
	if info == nil || job == nil {
		return nil, nil
	}
	ml, err := info.MLPolicy()
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "mlPolicy"), "", err.Error())}
	}
	if ml == nil || ml.Flux == nil {
		return nil, nil
	}
	var errs field.ErrorList
	p := &plan{tasksPerNode: ptr.Deref(ml.Flux.NumProcPerNode, DefaultNumProcPerNode)}
	if trainerErrs := req.TrainerErrors(); len(trainerErrs) > 0 {
		return nil, trainerErrs
	}
	p.ps, p.c, _ = info.Trainer()
	if !req.IsRuntime() && len(job.Name) > maxJobNameLength {
		errs = append(errs, field.TooLong(jobNamePath, job.Name, maxJobNameLength))
	}
	if err := p.checkInstaller(req); err != nil {
		errs = append(errs, err)
	}
	var settingsErrs field.ErrorList
	p.settings, settingsErrs = settingsOf(p.c, req)
	errs = append(errs, settingsErrs...)
	if err := p.setCommand(info, job); err != nil {
		return nil, append(errs, field.InternalError(field.NewPath("spec", "runtimeRef"), err))
	}

	n, err := info.NumNodes(job)
	var fe *field.Error
	switch {
	case errors.As(err, &fe):
		errs = append(errs, fe)
	case err != nil:
		errs = append(errs, field.Invalid(field.NewPath("spec", "trainer", "numNodes"), "", err.Error()))
	}
	p.nodes = n

	// Info's container holds the TrainJob's resourcesPerNode already.
	p.gpusPerNode = framework.GPUCount(p.c.Resources)
	if err := p.setTasks(job); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// checkInstaller rejects a runtime whose trainer step has an init
// container of the installer's name: the plugin's would replace it.
func (p *plan) checkInstaller(req framework.ValidateRequest) *field.Error {
	info := req.Info
	tmpl, err := info.TemplateSpec()
	if err != nil {
		return field.InternalError(field.NewPath("spec", "template"), err)
	}
	for _, rj := range tmpl.Spec.ReplicatedJobs {
		if rj.Name != p.ps.Name {
			continue
		}
		for _, c := range rj.Template.Spec.Template.Spec.InitContainers {
			if c.Name == InstallerContainer {
				return req.TemplateError(fmt.Sprintf(
					"replicatedJob %q has an init container named %q, the name of the one the Flux plugin adds to install Flux: rename it", rj.Name, InstallerContainer))
			}
		}
	}
	return nil
}

// settingsOf reads the Flux settings from the trainer container's env,
// the TrainJob's spec.trainer.env winning over the runtime's, as in
// Kubeflow Trainer. A setting must be a plain value: the plugin writes it
// into the pods and the scripts, it cannot read a Secret or a ConfigMap.
func settingsOf(c *framework.Container, req framework.ValidateRequest) (settings, field.ErrorList) {
	job := req.NewJob
	s := settings{viewImage: DefaultViewImage, networkDevice: DefaultNetworkDevice, queuePolicy: DefaultQueuePolicy}
	target := map[string]*string{EnvViewImage: &s.viewImage, EnvNetworkDevice: &s.networkDevice, EnvQueuePolicy: &s.queuePolicy}
	var errs field.ErrorList
	set := func(v corev1.EnvVar, path *field.Path, runtimeErr func(string) *field.Error) {
		dst, ok := target[v.Name]
		if !ok {
			return
		}
		var msg string
		switch {
		case v.ValueFrom != nil:
			msg = fmt.Sprintf("%s must be a plain value: the Flux plugin writes it into the pods and their scripts, and cannot read it from a Secret, ConfigMap or field", v.Name)
		case v.Name == EnvQueuePolicy && !slices.Contains(QueuePolicies, v.Value):
			msg = fmt.Sprintf("%s must be one of Fluxion's queue policies: %s", v.Name, strings.Join(QueuePolicies, ", "))
		case v.Name == EnvNetworkDevice && !networkDevice.MatchString(v.Value):
			msg = fmt.Sprintf("%s must be a network interface name (1 to 15 letters, digits, '.', '_' or '-'), such as eth0", v.Name)
		case v.Name == EnvViewImage && strings.TrimSpace(v.Value) == "":
			msg = fmt.Sprintf("%s must name an image, such as %s", v.Name, DefaultViewImage)
		}
		if msg == "" {
			*dst = v.Value
			return
		}
		if path != nil {
			errs = append(errs, field.Invalid(path, v.Value, msg))
		} else {
			errs = append(errs, runtimeErr(msg))
		}
	}
	jobEnv := map[string]bool{}
	if t := job.Spec.Trainer; t != nil {
		for _, v := range t.Env {
			jobEnv[v.Name] = true
		}
	}
	// The runtime's first: in Info before the first Enforce, the
	// container's env is the runtime's; after it, the TrainJob's is merged
	// in, and is read again below.
	for _, v := range c.Env {
		if !jobEnv[v.Name] {
			set(v, nil, func(msg string) *field.Error {
				return req.TemplateError("the trainer container's env: " + msg)
			})
		}
	}
	if t := job.Spec.Trainer; t != nil {
		for i, v := range t.Env {
			set(v, jobEnvPath.Index(i), nil)
		}
	}
	return s, errs
}

// setCommand finds what the entrypoint runs: the TrainJob's command, else
// the runtime's, then the TrainJob's args, joined with spaces as Kubeflow
// Trainer joins them. Without TrainJob args, the runtime's args stay the
// container's args, after the command, as in Kubeflow Trainer. It reads
// the runtime's container rather than Info's, which a first Enforce
// already wrapped.
func (p *plan) setCommand(info *framework.Info, job *trainer.TrainJob) error {
	rc, err := info.RuntimeContainer(p.ps.Name, p.c.Name)
	if err != nil {
		return err
	}
	var command, args []string
	if rc != nil {
		command, args = rc.Command, rc.Args
	}
	if t := job.Spec.Trainer; t != nil {
		if t.Command != nil {
			command = t.Command
		}
		if t.Args != nil {
			command, args = append(slices.Clone(command), t.Args...), nil
		}
	}
	p.command = strings.TrimSpace(strings.Join(command, " "))
	p.args = slices.Clone(args)
	return nil
}

// setTasks sets the Flux tasks per node, the TrainJob's numProcPerNode
// (an integer, or "auto" or "gpu": the GPUs of a node, 1 without) else the
// runtime's, and the GPUs each task gets: a node's GPUs shared evenly.
func (p *plan) setTasks(job *trainer.TrainJob) *field.Error {
	path := fluxPath.Child("numProcPerNode")
	if t := job.Spec.Trainer; t != nil && t.NumProcPerNode != nil {
		path = jobProcsPath
		v := *t.NumProcPerNode
		if v.Type == intstr.String && (v.StrVal == "auto" || v.StrVal == "gpu") {
			p.tasksPerNode = int32(max(min(p.gpusPerNode, 1<<30), 1))
		} else if n, err := strconv.ParseInt(v.String(), 10, 32); err == nil && n >= 1 {
			p.tasksPerNode = int32(n)
		} else {
			return field.Invalid(path, v.String(), `must be a positive integer, "auto" or "gpu" (the GPUs of one node, 1 without GPUs)`)
		}
	}
	if p.tasksPerNode < 1 {
		return field.Invalid(path, p.tasksPerNode, "must be at least 1")
	}
	if p.gpusPerNode == 0 {
		return nil
	}
	if p.gpusPerNode%int64(p.tasksPerNode) != 0 {
		return field.Invalid(path, p.tasksPerNode, fmt.Sprintf(
			"must divide the %d GPUs of a node, so that every Flux task gets the same number of GPUs (flux run -g)", p.gpusPerNode))
	}
	p.gpusPerTask = p.gpusPerNode / int64(p.tasksPerNode)
	return nil
}
