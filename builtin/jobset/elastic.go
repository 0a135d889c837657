package jobset

import (
	"fmt"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// ElasticAnnotation was set on the JobSet of an elastic job by controllers
// before protocol 1.5 (the elastic replicatedJob and its range, as JSON),
// for Status to read back. Status now reads the range from the Info the
// JobSet was built from; the annotation is neither written nor read. A
// JobSet that still carries it keeps it while it runs (a running JobSet is
// left as it is), and loses it at its next apply whole.
const ElasticAnnotation = "trainforge.dev/elastic"

// ElasticFeatureGate is the JobSet controller's feature gate that lets a
// running JobSet's Job parallelism and completions change (JobSet v0.12,
// alpha, off by default; set in the featureGates map of the controller's
// Configuration file); without it JobSet's webhook refuses a resize.
const ElasticFeatureGate = "ElasticJobSet"

// KueueQueueNameLabel is the label that submits a job to a Kueue queue:
// Kueue admits the job with a quota for its size when it resumes it.
const KueueQueueNameLabel = "kueue.x-k8s.io/queue-name"

// markElastic prepares the JobSet of a job with an elastic PodSet: an
// Indexed Job is what JobSet resizes in place (and what Kubernetes scales
// down by removing its highest indexes), so the Job's completionMode is set
// to Indexed, which is JobSet's default anyway. It returns the elastic
// replicatedJob's name, or "" when there is none.
func markElastic(js *jobsetv1alpha2.JobSet, info *framework.Info) (string, error) {
	var elastic string
	for k := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[k]
		ps := info.PodSet(rj.Name)
		if ps == nil || ps.Elastic == nil {
			continue
		}
		if elastic != "" {
			return "", &framework.InvalidJobError{Err: fmt.Errorf("replicatedJob %q: only one replicatedJob of a JobSet can be elastic", rj.Name)}
		}
		if rj.Replicas != 1 {
			return "", &framework.InvalidJobError{Err: fmt.Errorf("replicatedJob %q: an elastic step must have replicas 1 (its one Job is resized), not %d", rj.Name, rj.Replicas)}
		}
		if rj.Template.Spec.CompletionMode == nil {
			rj.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}
		elastic = rj.Name
	}
	return elastic, nil
}

// liveFields are the fields of the running JobSet of an elastic job that
// the host may resize in place: the elastic Job's parallelism and
// completions. A TrainJob in a Kueue queue is held at its size: Kueue
// admitted it with a quota for that size, and its elastic workloads do not
// cover TrainJob, so a resize in place would take the job past its quota
// unseen by Kueue. Kueue's TrainJob integration sees the new size itself
// (its pod sets no longer match the admitted Workload): it stops the job,
// replaces the Workload and resumes the job when the quota admits the new
// size; suspended, the JobSet is applied whole at that size. k is the
// elastic replicatedJob's index (elasticStep); it is nil for
// a JobSet that is not elastic.
func liveFields(k int, job *trainer.TrainJob) *framework.LiveFields {
	if k < 0 {
		return nil
	}
	base := "/spec/replicatedJobs/" + strconv.Itoa(k) + "/template/spec/"
	live := &framework.LiveFields{
		Paths:  []string{base + "parallelism", base + "completions"},
		Advice: fmt.Sprintf("A JobSet controller resizes a running JobSet only with its %s feature gate on (featureGates: {%s: true} in its Configuration file); the TrainJob keeps running at its old size and is resized once the gate is on and the TrainJob changes", ElasticFeatureGate, ElasticFeatureGate),
	}
	if queue := job.Labels[KueueQueueNameLabel]; queue != "" {
		live.Held = fmt.Sprintf("the TrainJob is in Kueue queue %q (label %s), which admitted it with a quota for its size, and Kueue's elastic workloads do not cover TrainJob", queue, KueueQueueNameLabel)
		live.Advice = "Kueue stops (suspends) the TrainJob when it sees that its Workload no longer matches, and resumes it at the new size once the queue's quota admits that: the job restarts at the new size (from its last checkpoint) instead of resizing in place. Until Kueue stops it, it runs at its old size"
	}
	return live
}

// nodesStatus reports the size of an elastic JobSet: its elastic
// replicatedJob's parallelism as the JobSet now has it (what the API
// server accepted), the range, from info, the Info the JobSet was built
// from, and the selector of its pods. It is nil for a JobSet that is not
// elastic, and without info, which alone says which replicatedJob is
// elastic and its range: the TrainJob then keeps the nodes last reported,
// from a build, the only thing that resizes the JobSet.
func nodesStatus(js *jobsetv1alpha2.JobSet, info *framework.Info, job *trainer.TrainJob) *trainer.NodesStatus {
	if info == nil {
		return nil
	}
	k := elasticStep(info, js)
	if k < 0 {
		return nil
	}
	rj := js.Spec.ReplicatedJobs[k]
	elastic := rj.Name
	r := info.PodSet(elastic).Elastic
	st := &trainer.NodesStatus{
		MinNodes: ptr.To(r.Min),
		MaxNodes: ptr.To(r.Max),
		Range:    fmt.Sprintf("%d:%d", r.Min, r.Max),
		Selector: labels.SelectorFromSet(labels.Set{
			jobsetv1alpha2.JobSetNameKey:        js.Name,
			jobsetv1alpha2.ReplicatedJobNameKey: elastic,
		}).String(),
	}
	if old := job.Status.Nodes; old != nil {
		st.LastResizeTime = old.LastResizeTime
	}
	st.Current = ptr.Deref(rj.Template.Spec.Parallelism, 1)
	return st
}

// elasticStep returns the index of js's replicatedJob whose PodSet is
// elastic, or -1 when none is (NewJobSet refused more than one).
func elasticStep(info *framework.Info, js *jobsetv1alpha2.JobSet) int {
	return slices.IndexFunc(js.Spec.ReplicatedJobs, func(rj jobsetv1alpha2.ReplicatedJob) bool {
		ps := info.PodSet(rj.Name)
		return ps != nil && ps.Elastic != nil
	})
}
