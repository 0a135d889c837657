package validation

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/builtin/builtintest"
	"github.com/trainforge/trainforge/internal/runtimeref"
)

// examples is the repository's examples/ directory.
var examples = filepath.Join("..", "..", "examples")

// checkRejection fails unless err is nil or an Invalid error whose every
// cause names a field: the webhook's answer must say what to change.
func checkRejection(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var st *apierrors.StatusError
	if !errors.As(err, &st) || !apierrors.IsInvalid(err) {
		t.Fatalf("the rejection is not an Invalid error naming fields: %T %v", err, err)
	}
	d := st.Status().Details
	if d == nil || len(d.Causes) == 0 {
		t.Fatalf("the rejection names no field: %v", err)
	}
	for _, c := range d.Causes {
		if c.Field == "" {
			t.Fatalf("a cause of the rejection names no field: %+v in %v", c, err)
		}
	}
}

// FuzzTrainJob decodes arbitrary JSON as a TrainJob and as the runtime it
// references, and checks the TrainJob as the webhook does on create (against
// the runtime, when that decodes) and on an update (against its own
// status.runtimeSnapshot, when that is of the runtime its runtimeRef
// names). It must never panic, and a rejection must name the fields.
func FuzzTrainJob(f *testing.F) {
	jobs := builtintest.ExampleDocs(f, examples, trainer.TrainJobKind)
	runtimes := builtintest.ExampleDocs(f, examples, trainer.ClusterTrainingRuntimeKind, trainer.TrainingRuntimeKind)
	for i, job := range jobs {
		f.Add(job, runtimes[i%len(runtimes)])
	}
	f.Add([]byte(`{"metadata":{"name":"j","namespace":"ns"},"spec":{"runtimeRef":{"name":"rt","kind":"Runtime"},"trainer":{"numNodes":0}}}`), []byte(nil))
	f.Add([]byte(`{"spec":{"runtimeRef":{"name":"rt"},"trainer":{"env":[{"name":"PET_NNODES","value":"9"}],"numProcPerNode":"many"}}}`), runtimes[0])
	f.Add([]byte(`{"spec":{"runtimeRef":{"name":"rt"}},"status":{"runtimeSnapshot":{"apiGroup":"trainer.kubeflow.org","kind":"ClusterTrainingRuntime","name":"other","spec":{}}}}`), []byte(`{}`))
	f.Add([]byte(`{"spec":{"runtimeRef":{"name":"rt"}},"status":{"runtimeSnapshot":{"apiGroup":"trainer.kubeflow.org","kind":"ClusterTrainingRuntime","name":"rt","spec":{"mlPolicy":{"torch":{}}}}}}`), []byte(`{}`))
	f.Add([]byte(`{"spec":{"runtimeRef":{"name":"rt"}}}`), []byte(`{"spec":{"mlPolicy":{"deepspeed":{}},"template":{"spec":{"replicatedJobs":[]}}}}`))
	fw := builtintest.Framework(f, builtintest.Pipeline...)
	f.Fuzz(func(t *testing.T, jobJSON, runtimeJSON []byte) {
		job := &trainer.TrainJob{}
		if err := json.Unmarshal(jobJSON, job); err != nil {
			return // the API server refuses what does not decode
		}
		err := TrainJobSpec(job)
		checkRejection(t, err)
		if err != nil {
			return
		}
		rt := &trainer.ClusterTrainingRuntime{}
		if runtimeJSON != nil && json.Unmarshal(runtimeJSON, rt) == nil {
			_, err = TrainJob(context.Background(), fw, nil, job, &rt.Spec)
			checkRejection(t, err)
		}
		if snap := job.Status.RuntimeSnapshot; snap != nil && runtimeref.CheckSnapshot(job) == nil {
			_, err = TrainJob(context.Background(), fw, job.DeepCopy(), job, &snap.Spec)
			checkRejection(t, err)
		}
	})
}

// FuzzRuntime decodes arbitrary JSON as a TrainingRuntime and as a
// ClusterTrainingRuntime and validates it. It must never panic, and a
// rejection must name the fields.
func FuzzRuntime(f *testing.F) {
	for _, rt := range builtintest.ExampleDocs(f, examples, trainer.ClusterTrainingRuntimeKind, trainer.TrainingRuntimeKind) {
		f.Add(rt)
	}
	f.Add([]byte(`{"spec":{"mlPolicy":{"torch":{"numProcPerNode":"abc"}}}}`))
	f.Add([]byte(`{"spec":{"mlPolicy":{"mpi":{}},"podGroupPolicy":{"volcano":{}}}}`))
	f.Add([]byte(`{"spec":{"template":{"spec":{"replicatedJobs":[{"name":"node","replicas":-1}]}}}}`))
	fw := builtintest.Framework(f, builtintest.Pipeline...)
	f.Fuzz(func(t *testing.T, data []byte) {
		ctr := &trainer.ClusterTrainingRuntime{}
		if err := json.Unmarshal(data, ctr); err == nil {
			_, err := Runtime(context.Background(), fw, runtimeKind(trainer.ClusterTrainingRuntimeKind), ctr.Name, &ctr.Spec)
			checkRejection(t, err)
		}
		tr := &trainer.TrainingRuntime{}
		if err := json.Unmarshal(data, tr); err == nil {
			_, err := Runtime(context.Background(), fw, runtimeKind(trainer.TrainingRuntimeKind), tr.Name, &tr.Spec)
			checkRejection(t, err)
		}
	})
}

func runtimeKind(kind string) schema.GroupKind {
	return schema.GroupKind{Group: trainer.GroupVersion.Group, Kind: kind}
}
