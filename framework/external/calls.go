package external

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/pluginhost"
	"github.com/trainforge/trainforge/framework/remote"
)

// Invoke implements grpc.ClientConnInterface for the plugin protocol's
// client (remote.Client): it sends one call to the process running now,
// with the call deadline, and explains its failure. A call while no
// process runs fails at once, with why (ErrNotRunning): it took no call,
// so the error is a *framework.UnavailableError, which the framework does
// not skip under failurePolicy Ignore (the TrainJob is retried), as a wasm
// plugin's that is stopped. So is the first call of an input that misses
// its deadline (missedDeadline).
func (p *Plugin) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	p.calls.Begin()
	defer p.calls.End()
	c, err := p.current()
	if err != nil {
		return &framework.UnavailableError{Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, p.opts.CallTimeout)
	defer cancel()
	err = c.cc.Invoke(cctx, method, args, reply, opts...)
	if msg := tooLarge(err, p.opts.MaxMessageBytes); msg != "" {
		return &callFailure{msg: msg, err: err}
	}
	switch {
	case err == nil:
		if req, ok := args.(proto.Message); ok && !p.missed.Empty() {
			p.missed.Forget(pluginhost.KeyOf(method, req, nil))
		}
		return nil
	case ctx.Err() != nil:
		return err // the caller gave up
	case timedOut(cctx, err):
		return p.missedDeadline(method, args, err)
	case isUnavailable(err) || c.link.maybeEnded():
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

// missedDeadline explains a call that got no answer within callTimeout.
// One process serves every TrainJob's calls, so a call may miss its
// deadline behind other TrainJobs' calls (a plugin busy with a huge answer
// for another TrainJob, a machine short of CPU) rather than by what the
// plugin does with its own input. The first miss of an input is therefore
// no answer of the plugin's: it is a *framework.UnavailableError, which
// retries the TrainJob under either failure policy. A second miss of the
// same input (within pluginhost.MissedDeadlineTTL, with no answer
// between) is the plugin's failure on it, skipped under Ignore and failing
// the TrainJob under Fail.
// A plugin that hangs on an input so costs its TrainJob one more
// callTimeout and the retry's delay; what an Ignore plugin's TrainJob gets
// no longer depends on one unlucky call.
func (p *Plugin) missedDeadline(method string, args any, err error) error {
	failure := &callFailure{msg: fmt.Sprintf("no answer within callTimeout %s", p.opts.CallTimeout), err: err}
	req, ok := args.(proto.Message)
	if !ok {
		return failure
	}
	if !p.missed.AddFirst(pluginhost.KeyOf(method, req, nil), failure) {
		failure.msg += ", again for this input"
		return failure
	}
	failure.msg += " (" + pluginhost.FirstMissNote + ")"
	return &framework.UnavailableError{Err: failure}
}

// isUnavailable reports whether a call failed because the plugin's process
// could not be reached, as when it has exited.
func isUnavailable(err error) bool {
	code := status.Code(err)
	return code == codes.Unavailable || code == codes.Canceled
}

// NewStream implements grpc.ClientConnInterface; the plugin protocol has
// no streaming call.
func (p *Plugin) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "the plugin protocol has no streaming calls")
}

// grpcTooLarge is how gRPC refuses a message past its receiver's bound.
var grpcTooLarge = regexp.MustCompile(`received message larger than max \((\d+) vs\. (\d+)\)`)

// tooLarge explains a call that failed because a message was past a
// bound, or returns "". The host's own bound (an answer larger than
// maxMessageBytes) is told from the plugin's (a request larger than the
// plugin's gRPC server accepts) by its value.
func tooLarge(err error, maxBytes int) string {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.ResourceExhausted {
		return ""
	}
	// gRPC says which bound in its message only.
	m := grpcTooLarge.FindStringSubmatch(st.Message())
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
	if status.Code(err) != codes.DeadlineExceeded {
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

// Watch returns what the plugin's Watch answered at the latest successful
// start (nil when it does not implement Watch).
func (p *Plugin) Watch(context.Context) ([]framework.WatchSource, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.generation.Load() == 0 {
		return nil, &framework.UnavailableError{Err: fmt.Errorf("%w: it has never started, so its watches are not known: %s", ErrNotRunning, p.down)}
	}
	return slices.Clone(p.described.Watch), nil
}
