package external

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
)

// call runs one extension-point call on the running plugin, with the
// call deadline, and explains its failure.
func (p *Plugin) call(ctx context.Context, fn func(context.Context, *remote.Client) error) error {
	p.inflight.Add(1)
	defer p.callDone()
	c, err := p.current()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	err = fn(cctx, c.rpc)
	if msg := tooLarge(err, p.opts.MaxMessageBytes); msg != "" {
		return &callFailure{msg: msg, err: err}
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return err // the caller gave up
	case timedOut(cctx, err):
		return &callFailure{msg: fmt.Sprintf("no answer within callTimeout %s", p.opts.CallTimeout), err: err}
	case remote.IsUnavailable(err) || c.link.maybeEnded():
		// The plugin is probably gone: wait a moment for its end to
		// explain the failure and to make Ready say so at once.
		select {
		case <-c.link.ended():
		case <-time.After(time.Second):
		}
		if c.link.endReason() != "" {
			p.exited(c)
			return &callFailure{msg: c.link.endedDuringCall(), err: err}
		}
		select {
		case p.poke <- struct{}{}:
		default:
		}
		return err
	default:
		return err
	}
}

// grpcTooLarge is how gRPC refuses a message past its receiver's bound.
var grpcTooLarge = regexp.MustCompile(`received message larger than max \((\d+) vs\. (\d+)\)`)

// tooLarge explains a call that failed because a message was past a
// bound, or returns "". The host's own bound (an answer larger than
// maxMessageBytes) is told from the plugin's (a request larger than the
// plugin's gRPC server accepts) by its value.
func tooLarge(err error, maxBytes int) string {
	var ce *remote.CallError
	if !errors.As(err, &ce) || ce.Code != codes.ResourceExhausted {
		return ""
	}
	m := grpcTooLarge.FindStringSubmatch(ce.Message)
	if m == nil {
		return ""
	}
	got, _ := strconv.Atoi(m[1])
	limit, _ := strconv.Atoi(m[2])
	if limit == maxBytes {
		return fmt.Sprintf("the answer has %d bytes, more than %s %d", got, remote.FieldMaxMessageBytes, maxBytes)
	}
	return fmt.Sprintf("the plugin refused a request of %d bytes: its gRPC server accepts at most %d", got, limit)
}

// timedOut reports whether a call failed because its deadline passed.
// The plugin's side has the deadline too, and its DEADLINE_EXCEEDED may
// arrive a moment before ctx's timer fires: wait for that moment, but not
// for an answer of the plugin's own (about something else) well before.
func timedOut(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	var ce *remote.CallError
	if !errors.As(err, &ce) || ce.Code != codes.DeadlineExceeded {
		return false
	}
	select {
	case <-ctx.Done():
		return true
	case <-time.After(deadlineSkew):
		return false
	}
}

// deadlineSkew is how far apart the two ends' deadlines of one call may
// fire.
const deadlineSkew = 100 * time.Millisecond

// callFailure is a failed call explained by the host; it wraps what the
// transport said.
type callFailure struct {
	msg string
	err error
}

func (e *callFailure) Error() string { return e.msg }
func (e *callFailure) Unwrap() error { return e.err }

// Validate implements framework.Validator: a failed call becomes an
// internal field error. The runner calls ValidateCall instead.
func (p *Plugin) Validate(ctx context.Context, info *framework.Info, oldJob, newJob *trainer.TrainJob) ([]string, field.ErrorList) {
	w, errs, err := p.ValidateCall(ctx, info, oldJob, newJob)
	if err != nil {
		return w, append(errs, field.InternalError(field.NewPath("spec"), err))
	}
	return w, errs
}

// ValidateCall asks the plugin to validate a TrainJob.
func (p *Plugin) ValidateCall(ctx context.Context, info *framework.Info, oldJob, newJob *trainer.TrainJob) (warnings []string, errs field.ErrorList, err error) {
	err = p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		var err error
		warnings, errs, err = c.ValidateCall(ctx, info, oldJob, newJob)
		return err
	})
	return warnings, errs, err
}

// EnforceMLPolicy asks the plugin to change Info; Info changes only when
// the call succeeds and its patch is valid.
func (p *Plugin) EnforceMLPolicy(ctx context.Context, info *framework.Info, job *trainer.TrainJob) error {
	return p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		return c.EnforceMLPolicy(ctx, info, job)
	})
}

// EnforcePodGroupPolicy asks the plugin to change Info; Info changes only
// when the call succeeds and its patch is valid.
func (p *Plugin) EnforcePodGroupPolicy(ctx context.Context, info *framework.Info, job *trainer.TrainJob) error {
	return p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		return c.EnforcePodGroupPolicy(ctx, info, job)
	})
}

// Build asks the plugin for its objects.
func (p *Plugin) Build(ctx context.Context, info *framework.Info, job *trainer.TrainJob) (objs []*unstructured.Unstructured, err error) {
	err = p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		var err error
		objs, err = c.Build(ctx, info, job)
		return err
	})
	return objs, err
}

// Watch returns what the plugin's Watch answered at the latest successful
// start (nil when it does not implement Watch).
func (p *Plugin) Watch(context.Context) ([]framework.WatchSource, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.known {
		return nil, fmt.Errorf("%w: it has never started, so its watches are not known: %s", ErrNotRunning, p.down)
	}
	return slices.Clone(p.watch), nil
}

// Status asks the plugin for the TrainJob's status.
func (p *Plugin) Status(ctx context.Context, job *trainer.TrainJob, owned []*unstructured.Unstructured) (st *trainer.TrainJobStatus, err error) {
	err = p.call(ctx, func(ctx context.Context, c *remote.Client) error {
		var err error
		st, err = c.Status(ctx, job, owned)
		return err
	})
	return st, err
}
