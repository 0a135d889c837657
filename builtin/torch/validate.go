package torch

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Validate rejects a TrainJob that sets a PET_* variable in
// spec.trainer.env or an invalid spec.trainer.numProcPerNode, and a
// runtime whose envInjection names a replicatedJob or container it does
// not have.
//
// The runtime's mlPolicy.torch.numProcPerNode is checked too, with the
// path spec.mlPolicy.torch.numProcPerNode, whenever it is the value in
// effect: when newJob is nil or the runtime's stand-in
// (framework.IsRuntimeCheck) or sets no numProcPerNode. A runtime value
// that the TrainJob overrides cannot break the job, so it does not block
// it. When info is given, a runtime whose trainer step or trainer
// container is missing is reported on spec.runtimeRef of a TrainJob, or on
// spec.template of the runtime itself. info and newJob may be nil.
func (*plugin) Validate(_ context.Context, info *framework.Info, _, newJob *trainer.TrainJob) ([]string, field.ErrorList) {
	var errs field.ErrorList
	var t *trainer.Trainer
	if newJob != nil {
		t = newJob.Spec.Trainer
	}
	if t != nil {
		envPath := field.NewPath("spec", "trainer", "env")
		for i, v := range t.Env {
			if strings.HasPrefix(v.Name, EnvPrefix) {
				errs = append(errs, field.Forbidden(envPath.Index(i).Child("name"),
					fmt.Sprintf("the Torch plugin sets the %s* variables itself (%s, %s, %s, %s, %s); use spec.trainer.numNodes and spec.trainer.numProcPerNode instead",
						EnvPrefix, EnvNumNodes, EnvNumProcPerNode, EnvNodeRank, EnvMasterAddr, EnvMasterPort)))
			}
		}
		if t.NumProcPerNode != nil {
			if err := validateNumProcPerNode(*t.NumProcPerNode, trainJobNumProcPath); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if info == nil {
		return nil, errs
	}
	policy, err := info.MLPolicy()
	if err != nil {
		return nil, append(errs, field.InternalError(field.NewPath("spec", "mlPolicy"), err))
	}
	if (t == nil || t.NumProcPerNode == nil) && policy != nil && policy.Torch != nil && policy.Torch.NumProcPerNode != nil {
		if err := validateNumProcPerNode(*policy.Torch.NumProcPerNode, runtimeNumProcPath); err != nil {
			errs = append(errs, err)
		}
	}
	if newJob != nil {
		if _, _, err := info.Trainer(); err != nil {
			if framework.IsRuntimeCheck(newJob) {
				errs = append(errs, field.Invalid(field.NewPath("spec", "template"), "", err.Error()))
			} else {
				errs = append(errs, field.Invalid(field.NewPath("spec", "runtimeRef"), newJob.Spec.RuntimeRef.Name, err.Error()))
			}
		}
	}
	_, injectionErrs := injectionTargets(info, policy)
	errs = append(errs, injectionErrs...)
	return nil, errs
}
