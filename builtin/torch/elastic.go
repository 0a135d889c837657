package torch

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// The variables of an elastic job (mlPolicy.torch.elasticPolicy): torchrun
// reads each of its options from PET_<OPTION> (torch.distributed.run).
const (
	// EnvRdzvBackend is the rendezvous backend: c10d, whose store is a
	// TCP server on the endpoint's host.
	EnvRdzvBackend = "PET_RDZV_BACKEND"
	// EnvRdzvEndpoint is HOST:PORT of the rendezvous: the first trainer
	// pod's fully qualified DNS name (rdzvHost) and MasterPort.
	EnvRdzvEndpoint = "PET_RDZV_ENDPOINT"
	// EnvRdzvID names the rendezvous; the TrainJob's UID, so that no two
	// TrainJobs (nor a TrainJob and one of the same name before it) ever
	// share one.
	EnvRdzvID = "PET_RDZV_ID"
	// EnvMaxRestarts is how many times torchrun restarts its worker group
	// after a worker failed.
	EnvMaxRestarts = "PET_MAX_RESTARTS"
)

// RdzvBackend is the rendezvous backend of an elastic job.
const RdzvBackend = "c10d"

// clusterDomain is the cluster's DNS domain in the rendezvous host:
// Kubernetes' default, which Kubeflow Trainer assumes too.
const clusterDomain = "cluster.local"

// rdzvHost is the rendezvous endpoint's host: the first trainer pod's
// fully qualified name, not the short <pod>.<subdomain> of the master
// variables. torchrun's c10d backend hosts its store only on the node
// whose hostname or canonical name (the first name of its /etc/hosts
// line, which the kubelet writes as <pod>.<subdomain>.<namespace>.svc.<cluster
// domain>) is the endpoint's host; with the short name no node matches,
// none hosts it, and every torchrun fails with "The connection to the C10d
// store has failed".
func rdzvHost(master, namespace string) string {
	return master + "." + namespace + ".svc." + clusterDomain
}

// DefaultMaxRestarts is PET_MAX_RESTARTS when elasticPolicy sets no
// maxRestarts. torchrun's own default, 0, would end the job at its first
// scale-down: the survivors' collectives fail when a peer goes away, and
// torchrun counts that as a worker failure (a node that joins costs no
// restart: it re-forms the group without one). Kubeflow Training
// Operator v1 left it unset; 3 lets a job ride out a few resizes or lost
// nodes between checkpoints.
const DefaultMaxRestarts int32 = 3

// elasticBounds returns the range of nodes of an elastic job and whether
// the job is elastic: minNodes and maxNodes, each the job's node count
// when unset.
func elasticBounds(policy *trainer.MLPolicy, nodes int32) (framework.CountRange, bool) {
	if policy == nil || policy.Torch == nil || policy.Torch.ElasticPolicy == nil {
		return framework.CountRange{}, false
	}
	ep := policy.Torch.ElasticPolicy
	r := framework.CountRange{Min: nodes, Max: nodes}
	if ep.MinNodes != nil {
		r.Min = *ep.MinNodes
	}
	if ep.MaxNodes != nil {
		r.Max = *ep.MaxNodes
	}
	return r, true
}

// boundsError says what is wrong with an elastic job's range, or with
// its node count against the range; nil when both are good. A bound
// that policy's elasticPolicy leaves unset is the node count, so a count
// past the other bound is reported as such: on the runtime's bound that
// is set when a runtime is checked (isRuntime), else on the TrainJob's
// spec.trainer.numNodes. fromRuntime says that the TrainJob's count is the
// runtime's mlPolicy.numNodes. The range's own rules (each bound at least
// 1, minNodes at most maxNodes) are the CRD's, checked before this.
func boundsError(policy *trainer.MLPolicy, r framework.CountRange, nodes int32, fromRuntime, isRuntime bool) *field.Error {
	ep := policy.Torch.ElasticPolicy
	if nodes >= r.Min && nodes <= r.Max {
		return nil
	}
	runtimeNodes := "the runtime's mlPolicy.numNodes"
	if policy.NumNodes == nil {
		runtimeNodes = "the default numNodes (the runtime sets no mlPolicy.numNodes)"
	}
	var suffix string
	if fromRuntime {
		suffix = " (the runtime's mlPolicy.numNodes applies while spec.trainer.numNodes is unset)"
	}
	switch {
	case ep.MinNodes == nil && ep.MaxNodes != nil && nodes > r.Max:
		if isRuntime {
			return field.Invalid(elasticPolicyPath.Child("maxNodes"), r.Max, fmt.Sprintf(
				"must be at least %d, %s, which is also the minNodes while elasticPolicy sets none; set minNodes, or a maxNodes of at least %d",
				nodes, runtimeNodes, nodes))
		}
		return field.Invalid(trainJobNumNodesPath, nodes, fmt.Sprintf(
			"must be at most %d, the maxNodes of the runtime's mlPolicy.torch.elasticPolicy%s", r.Max, suffix))
	case ep.MaxNodes == nil && ep.MinNodes != nil && nodes < r.Min:
		if isRuntime {
			return field.Invalid(elasticPolicyPath.Child("minNodes"), r.Min, fmt.Sprintf(
				"must be at most %d, %s, which is also the maxNodes while elasticPolicy sets none; set maxNodes, or a minNodes of at most %d",
				nodes, runtimeNodes, nodes))
		}
		return field.Invalid(trainJobNumNodesPath, nodes, fmt.Sprintf(
			"must be at least %d, the minNodes of the runtime's mlPolicy.torch.elasticPolicy%s", r.Min, suffix))
	}
	return field.Invalid(trainJobNumNodesPath, nodes, fmt.Sprintf(
		"must be between %d and %d, the minNodes and maxNodes of the runtime's mlPolicy.torch.elasticPolicy%s", r.Min, r.Max, suffix))
}

var elasticPolicyPath = field.NewPath("spec", "mlPolicy", "torch", "elasticPolicy")

// elasticEnv returns the variables of an elastic job: the range of nodes
// instead of their number, the c10d rendezvous on the first trainer pod,
// and the restarts torchrun may spend. None depends on the job's current
// size, so that a resize leaves the pod template as it is.
func elasticEnv(r framework.CountRange, nproc, master string, job *trainer.TrainJob, policy *trainer.MLPolicy) []corev1.EnvVar {
	restarts := DefaultMaxRestarts
	if mr := policy.Torch.ElasticPolicy.MaxRestarts; mr != nil {
		restarts = *mr
	}
	return []corev1.EnvVar{
		{Name: EnvNumNodes, Value: fmt.Sprintf("%d:%d", r.Min, r.Max)},
		{Name: EnvNumProcPerNode, Value: nproc},
		framework.CompletionIndexEnv(EnvNodeRank),
		{Name: EnvRdzvBackend, Value: RdzvBackend},
		{Name: EnvRdzvEndpoint, Value: rdzvHost(master, job.Namespace) + ":" + strconv.Itoa(int(MasterPort))},
		{Name: EnvRdzvID, Value: rdzvID(job)},
		{Name: EnvMaxRestarts, Value: strconv.Itoa(int(restarts))},
	}
}

// rdzvID is the TrainJob's UID, or namespace/name before it has one (a
// TrainJob checked on admission).
func rdzvID(job *trainer.TrainJob) string {
	if job.UID != "" {
		return string(job.UID)
	}
	return job.Namespace + "/" + job.Name
}
