package torch

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// Field paths of numProcPerNode, in the TrainJob and in the runtime.
var (
	trainJobNumProcPath = field.NewPath("spec", "trainer", "numProcPerNode")
	runtimeNumProcPath  = field.NewPath("spec", "mlPolicy", "torch", "numProcPerNode")
)

// numProcPerNode is the numProcPerNode in effect and the path of the field
// it comes from: the TrainJob's, else the runtime's, else "auto" (with the
// TrainJob's path).
func numProcPerNode(job *trainer.TrainJob, policy *trainer.MLPolicy) (intstr.IntOrString, *field.Path) {
	if job != nil && job.Spec.Trainer != nil && job.Spec.Trainer.NumProcPerNode != nil {
		return *job.Spec.Trainer.NumProcPerNode, trainJobNumProcPath
	}
	if policy != nil && policy.Torch != nil && policy.Torch.NumProcPerNode != nil {
		return *policy.Torch.NumProcPerNode, runtimeNumProcPath
	}
	return intstr.FromString(NumProcPerNodeAuto), trainJobNumProcPath
}

// parseNumProcPerNode returns the positive integer v holds (n > 0), or
// its keyword (auto, cpu, gpu); ok is false when v is neither.
func parseNumProcPerNode(v intstr.IntOrString) (n int, keyword string, ok bool) {
	if v.Type == intstr.Int {
		return int(v.IntVal), "", v.IntVal > 0
	}
	switch v.StrVal {
	case NumProcPerNodeAuto, NumProcPerNodeCPU, NumProcPerNodeGPU:
		return 0, v.StrVal, true
	}
	n, err := strconv.Atoi(v.StrVal)
	return n, "", err == nil && n > 0
}

// validateNumProcPerNode returns a field error when v is neither a
// positive integer nor one of auto, cpu, gpu.
func validateNumProcPerNode(v intstr.IntOrString, path *field.Path) *field.Error {
	if _, _, ok := parseNumProcPerNode(v); ok {
		return nil
	}
	return field.Invalid(path, v.String(),
		`must be a positive integer or one of "`+NumProcPerNodeAuto+`", "`+NumProcPerNodeCPU+`", "`+NumProcPerNodeGPU+`"`)
}

// ResolveNumProcPerNode returns the value of PET_NPROC_PER_NODE for a
// valid numProcPerNode on a node with the given resources: an integer as
// is; "gpu" as the node's GPU count, or "gpu" when it has none; "cpu" as
// its CPU count (at least 1); "auto" as the GPU count, else the CPU count
// when CPUs are set, else "auto". An invalid v is returned unchanged.
func ResolveNumProcPerNode(v intstr.IntOrString, res corev1.ResourceRequirements) string {
	n, keyword, ok := parseNumProcPerNode(v)
	switch {
	case !ok:
		return v.String()
	case keyword == "":
		return strconv.Itoa(n)
	}
	gpus := framework.GPUCount(res)
	cpus, cpuSet := CPUCount(res)
	switch keyword {
	case NumProcPerNodeGPU:
		if gpus > 0 {
			return strconv.FormatInt(gpus, 10)
		}
	case NumProcPerNodeCPU:
		return strconv.FormatInt(cpus, 10)
	case NumProcPerNodeAuto:
		if gpus > 0 {
			return strconv.FormatInt(gpus, 10)
		}
		if cpuSet {
			return strconv.FormatInt(cpus, 10)
		}
	}
	return keyword
}

// CPUCount is the number of CPUs of one node, from the cpu limit, else the
// cpu request, rounded down and at least 1; set is false (and the count 1)
// when neither is set.
func CPUCount(res corev1.ResourceRequirements) (n int64, set bool) {
	q, ok := res.Limits[corev1.ResourceCPU]
	if !ok {
		q, ok = res.Requests[corev1.ResourceCPU]
	}
	if !ok {
		return 1, false
	}
	return max(q.MilliValue()/1000, 1), true
}
