package framework

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// What every gang-scheduling plugin does: find the gang and size its
// PodGroup. Coscheduling and vendor schedulers (Volcano, ...) share these so
// that the same job gets the same minMember and minResources whichever
// scheduler runs it.

// ErrNoGang says that a runtime has no trainer step to gang-schedule.
var ErrNoGang = fmt.Errorf("gang scheduling holds the trainer step, and the runtime has none: label a replicatedJob %s=%s",
	trainer.AncestorStepLabel, trainer.TrainerStep)

// ErrEmptyGang says that the trainer step has no pods.
var ErrEmptyGang = errors.New("the trainer step has no pods to gang-schedule")

// Gang returns the PodSets whose pods a gang scheduler holds together, in
// order: those of the trainer step. The initializers run before training
// and must not wait for the trainers, so they are not part of it.
func (i *Info) Gang() ([]*PodSet, error) {
	pods := i.PodSetsOfStep(trainer.TrainerStep)
	if len(pods) == 0 {
		return nil, ErrNoGang
	}
	return pods, nil
}

// GangSize returns a PodGroup's minMember and minResources for the pods of
// the given PodSets: the number of their pods, and for each resource one
// pod's requests (PodSet.SinglePodRequests, counted the way the scheduler
// counts them) times the number of pods, summed. An elastic PodSet
// (PodSet.Elastic) counts its minimum, not its Count: an elastic job trains
// as soon as its minimum fits, its other pods join as capacity frees, and
// the PodGroup stays the same when the job is resized. Resources are summed
// in PodSet order and by name, so the result, format included, does not
// depend on map order. It fails with ErrEmptyGang when there is no pod.
func GangSize(pods []*PodSet) (int32, corev1.ResourceList, error) {
	var members int64
	var total corev1.ResourceList
	for _, ps := range pods {
		count := ps.Count
		if ps.Elastic != nil {
			count = ps.Elastic.Min
		}
		n := int64(ps.Replicas) * int64(count)
		if n <= 0 {
			continue
		}
		members += n
		for _, name := range slices.Sorted(maps.Keys(ps.SinglePodRequests)) {
			q := ps.SinglePodRequests[name].DeepCopy()
			q.Mul(n) // exact: it falls back to arbitrary precision on overflow
			if total == nil {
				total = corev1.ResourceList{}
			}
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	if members == 0 {
		return 0, nil, ErrEmptyGang
	}
	if members > math.MaxInt32 {
		return 0, nil, fmt.Errorf("the trainer step has %d pods, more than a PodGroup's minMember can hold", members)
	}
	return int32(members), total, nil
}
