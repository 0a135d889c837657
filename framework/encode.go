package framework

import (
	"context"
	"encoding/json"
	"sync"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// encodedJob encodes one TrainJob once for the calls of a reconcile: every
// external plugin is sent the same TrainJob in Enforce and Build.
type encodedJob struct {
	job  *trainer.TrainJob
	once sync.Once
	data []byte
	err  error
}

type encodedJobKey struct{}

// WithEncodedTrainJob returns a context in which EncodedTrainJob encodes
// job at most once. The TrainJob must not change while the context is in
// use (plugins only read it).
func WithEncodedTrainJob(ctx context.Context, job *trainer.TrainJob) context.Context {
	if e, ok := ctx.Value(encodedJobKey{}).(*encodedJob); ok && e.job == job {
		return ctx
	}
	return context.WithValue(ctx, encodedJobKey{}, &encodedJob{job: job})
}

// EncodedTrainJob returns the JSON of job: encoded once per context made by
// WithEncodedTrainJob for the same TrainJob, else anew. The bytes are
// shared: do not change them.
func EncodedTrainJob(ctx context.Context, job *trainer.TrainJob) ([]byte, error) {
	e, ok := ctx.Value(encodedJobKey{}).(*encodedJob)
	if !ok || e.job != job {
		return json.Marshal(job)
	}
	e.once.Do(func() { e.data, e.err = json.Marshal(job) })
	return e.data, e.err
}
