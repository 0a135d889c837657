package sdk

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/trainforge/trainforge/framework"
)

// Gang returns the PodSets a gang scheduler must hold together: those of
// the trainer step, in order. The dataset and model initializers run before
// training, so a scheduler plugin leaves them out of the gang: their pods
// get no pod-group label or annotation and are not counted, or they would
// wait for trainers that cannot start before them. A runtime without a
// trainer step is an error that says how to fix it.
func Gang(info *framework.Info) ([]*framework.PodSet, error) {
	return info.Gang()
}

// GangSize returns what a PodGroup for the gang's pods needs: minMember,
// the number of pods (replicas × pods per replica, after the ML policy set
// the node count), and minResources, one pod's requests times the number
// of pods, summed over the PodSets. One pod's requests are counted the way
// the kube-scheduler counts them (k8s.io/component-helpers): the larger of
// the init containers and the containers, sidecars added to both, plus the
// pod overhead. The built-in Coscheduling plugin sizes its PodGroup with the
// same function, so a job asks every gang scheduler for the same amount.
//
//	pods, err := sdk.Gang(info)
//	...
//	minMember, minResources, err := sdk.GangSize(pods)
func GangSize(pods []*framework.PodSet) (int32, corev1.ResourceList, error) {
	return framework.GangSize(pods)
}
