package jobset

import (
	"encoding/json"
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// ElasticAnnotation is set on the JobSet of an elastic job: the
// replicatedJob whose size may change and its range, as JSON
// ({"replicatedJob":"node","min":2,"max":4}). Status reads it back, so
// that it reports the size from the JobSet alone.
const ElasticAnnotation = "trainforge.dev/elastic"

// LiveFieldsAnnotation is framework.LiveFieldsAnnotation: the JobSet of
// an elastic job lists its elastic Job's parallelism and completions.
const LiveFieldsAnnotation = framework.LiveFieldsAnnotation

// ElasticFeatureGate is the JobSet controller's feature gate that lets a
// replicatedJob's parallelism and completions change while it runs.
const ElasticFeatureGate = "ElasticJobSet"

// elasticInfo is the value of ElasticAnnotation.
type elasticInfo struct {
	ReplicatedJob string `json:"replicatedJob"`
	Min           int32  `json:"min"`
	Max           int32  `json:"max"`
}

// markElastic annotates the JobSet of a job with an elastic PodSet: the
// range, and the fields to resize it in place. An Indexed Job is what
// JobSet resizes in place (and what Kubernetes scales down by removing its
// highest indexes), so the Job's completionMode is set to Indexed, which is
// JobSet's default anyway. It returns the elastic replicatedJob's name, or
// "" when there is none.
func markElastic(js *jobsetv1alpha2.JobSet, info *framework.Info) (string, error) {
	var live []string
	var elastic string
	for k := range js.Spec.ReplicatedJobs {
		rj := &js.Spec.ReplicatedJobs[k]
		ps := info.PodSet(rj.Name)
		if ps == nil || ps.Elastic == nil {
			continue
		}
		if len(live) > 0 {
			return "", &framework.InvalidJobError{Err: fmt.Errorf("replicatedJob %q: only one replicatedJob of a JobSet can be elastic", rj.Name)}
		}
		if rj.Replicas != 1 {
			return "", &framework.InvalidJobError{Err: fmt.Errorf("replicatedJob %q: an elastic step must have replicas 1 (its one Job is resized), not %d", rj.Name, rj.Replicas)}
		}
		if rj.Template.Spec.CompletionMode == nil {
			rj.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}
		data, err := json.Marshal(elasticInfo{ReplicatedJob: rj.Name, Min: ps.Elastic.Min, Max: ps.Elastic.Max})
		if err != nil {
			return "", err
		}
		framework.MergeMap(&js.Annotations, map[string]string{ElasticAnnotation: string(data)})
		elastic = rj.Name
		base := "/spec/replicatedJobs/" + strconv.Itoa(k) + "/template/spec/"
		live = append(live, base+"parallelism", base+"completions")
	}
	if len(live) == 0 {
		return "", nil
	}
	data, err := json.Marshal(live)
	if err != nil {
		return "", err
	}
	framework.MergeMap(&js.Annotations, map[string]string{LiveFieldsAnnotation: string(data)})
	return elastic, nil
}

// nodesStatus reports the size of an elastic JobSet: its elastic
// replicatedJob's parallelism as the JobSet now has it (what the API
// server accepted), the range, and the selector of its pods. It is nil
// for a JobSet that is not elastic.
func nodesStatus(js *jobsetv1alpha2.JobSet, job *trainer.TrainJob) *trainer.NodesStatus {
	raw, ok := js.Annotations[ElasticAnnotation]
	if !ok {
		return nil
	}
	var e elasticInfo
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return nil
	}
	st := &trainer.NodesStatus{
		MinNodes: ptr.To(e.Min),
		MaxNodes: ptr.To(e.Max),
		Range:    fmt.Sprintf("%d:%d", e.Min, e.Max),
		Selector: labels.SelectorFromSet(labels.Set{
			jobsetv1alpha2.JobSetNameKey:        js.Name,
			jobsetv1alpha2.ReplicatedJobNameKey: e.ReplicatedJob,
		}).String(),
	}
	if old := job.Status.Nodes; old != nil {
		st.LastResizeTime = old.LastResizeTime
	}
	for _, rj := range js.Spec.ReplicatedJobs {
		if rj.Name == e.ReplicatedJob {
			st.Current = ptr.Deref(rj.Template.Spec.Parallelism, 1)
		}
	}
	return st
}
