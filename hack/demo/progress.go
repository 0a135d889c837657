package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/trainforge/trainforge/hack/simcluster"
)

// The job whose training container the demo plays, reporting its progress
// through Kubeflow Trainer's protocol: the simulated cluster has no
// kubelet to run one.
const (
	progressJob   = "torch-gpu"
	progressSteps = 10
	progressEvery = 3 * time.Second
)

// progressReporter plays the training container of progressJob, and says
// how it went for the view.
type progressReporter struct {
	mu     sync.Mutex
	status string
}

func (r *progressReporter) set(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = s
}

// String is the reporter's state for the view.
func (r *progressReporter) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// run reports until 100%, the end of ctx, or an error.
func (r *progressReporter) run(ctx context.Context, c *simcluster.Cluster, statusAddr string) {
	r.set(fmt.Sprintf("%s/%s: waiting for a running trainer pod, then reporting as its training container would (TokenRequest bound to the pod, POST to KUBEFLOW_TRAINER_SERVER_URL)", demoNamespace, progressJob))
	err := c.PlayTrainingProgress(ctx, simcluster.ProgressOptions{
		Namespace: demoNamespace, TrainJob: progressJob, StatusAddr: statusAddr,
		Steps: progressSteps, Every: progressEvery,
	})
	switch {
	case ctx.Err() != nil:
	case err != nil:
		r.set(fmt.Sprintf("%s/%s: reporting failed: %v", demoNamespace, progressJob, err))
	default:
		r.set(fmt.Sprintf("%s/%s: reported 100%% through the status endpoint", demoNamespace, progressJob))
	}
}
