//go:build !wasip1

package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// Client is the one adapter of the plugin protocol on the host's side: a
// method for every RPC of a plugin's PluginService, with the framework's
// types in and out, and nothing else. What the plugin is (Describe's
// answer) is its caller's to keep: the host of external plugins asks at
// every start of the process, which may be another binary each time, and
// hands the framework only the points the plugin described
// (Implementation).
//
// Every JSON document of an answer is decoded by one decoder, within the
// client's Limits (decode.go). Enforce answers are checked and applied
// here: a patch that does not apply or touches anything but Info's fields
// is refused and Info is left unchanged. What built objects hold is
// checked by the framework, like the objects of in-process plugins.
type Client struct {
	rpc    pluginv1.PluginServiceClient
	limits Limits
}

// NewClient wraps a plugin's PluginService, whose answers it accepts within
// limits.
func NewClient(rpc pluginv1.PluginServiceClient, limits Limits) *Client {
	return &Client{rpc: rpc, limits: limits}
}

// Describe asks the plugin what it is: its description, and the extension
// points it implements (those this host knows; a newer plugin's others are
// never called). A description without a name, or with a built kind that
// names no version or kind, is refused.
func (c *Client) Describe(ctx context.Context) (framework.Description, []framework.ExtensionPoint, error) {
	resp, err := c.rpc.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		return framework.Description{}, nil, callError(err)
	}
	return descriptionFromProto(resp)
}

// Implementation returns the client's methods for the points listed: what
// the framework calls of a plugin that described these points.
func (c *Client) Implementation(points []framework.ExtensionPoint) framework.Implementation {
	return framework.Implementation{
		Configurable:           c,
		Validator:              c,
		MLPolicyEnforcer:       c,
		PodGroupPolicyEnforcer: c,
		Builder:                c,
		Watcher:                c,
		StatusReporter:         c,
	}.Only(points)
}

var (
	_ framework.Configurable           = (*Client)(nil)
	_ framework.Validator              = (*Client)(nil)
	_ framework.MLPolicyEnforcer       = (*Client)(nil)
	_ framework.PodGroupPolicyEnforcer = (*Client)(nil)
	_ framework.Builder                = (*Client)(nil)
	_ framework.Watcher                = (*Client)(nil)
	_ framework.StatusReporter         = (*Client)(nil)
)

// CallError is the failure of a call as the plugin reported it: the gRPC
// status code and the plugin's message, shown to users as it is.
type CallError struct {
	Code    codes.Code
	Message string
}

func (e *CallError) Error() string {
	switch e.Code {
	case codes.Unimplemented:
		return "the plugin does not implement this extension point: " + e.Message
	case codes.Unavailable:
		return "the plugin is not reachable: " + e.Message
	case codes.DeadlineExceeded:
		return "no answer before the call's deadline: " + e.Message
	default:
		return e.Message
	}
}

// callError turns a gRPC status into a CallError. Any other error (one that
// a transport in between has explained already, and which may wrap a
// status) is returned as it is.
func callError(err error) error {
	s, ok := err.(interface{ GRPCStatus() *status.Status })
	if !ok {
		return err
	}
	st := s.GRPCStatus()
	ce := &CallError{Code: st.Code(), Message: st.Message()}
	if ce.Code == codes.InvalidArgument {
		// The protocol's code for input that is wrong: no retry helps.
		return &framework.InvalidJobError{Err: ce}
	}
	return ce
}

// Configure sends the plugin its args, and no host facts.
func (c *Client) Configure(ctx context.Context, args json.RawMessage) error {
	return c.ConfigureWith(ctx, args, nil)
}

// ConfigureWith sends the plugin its args and the host's facts (h, none
// when nil), from which a plugin served with sdk.ServeFactory is made.
func (c *Client) ConfigureWith(ctx context.Context, args json.RawMessage, h framework.Handle) error {
	_, err := c.rpc.Configure(ctx, &pluginv1.ConfigureRequest{Args: args, Host: HostToProto(h)})
	return callError(err)
}

// Validate asks the plugin to validate a TrainJob or a runtime. A
// runtime's stand-in also carries RuntimeCheckAnnotation, for plugins
// before protocol 1.3.
func (c *Client) Validate(ctx context.Context, r framework.ValidateRequest) ([]string, field.ErrorList, error) {
	req := &pluginv1.ValidateRequest{Kind: pluginv1.ValidationKind_VALIDATION_KIND_TRAIN_JOB}
	newJob := r.NewJob
	if r.IsRuntime() {
		req.Kind = pluginv1.ValidationKind_VALIDATION_KIND_RUNTIME
		newJob = markRuntimeCheck(newJob)
	}
	var err error
	if req.Info, err = json.Marshal(r.Info); err != nil {
		return nil, nil, err
	}
	if r.OldJob != nil {
		if req.OldTrainJob, err = json.Marshal(r.OldJob); err != nil {
			return nil, nil, err
		}
	}
	if req.NewTrainJob, err = json.Marshal(newJob); err != nil {
		return nil, nil, err
	}
	resp, err := c.rpc.Validate(ctx, req)
	if err != nil {
		return nil, nil, callError(err)
	}
	errs, err := fieldErrorsFromProto(resp.GetFieldErrors(), c.limits)
	if err != nil {
		return nil, nil, err
	}
	return resp.GetWarnings(), errs, nil
}

// EnforceMLPolicy sends Info and the TrainJob and applies the answer.
func (c *Client) EnforceMLPolicy(ctx context.Context, info *framework.Info, job *trainer.TrainJob) error {
	return c.enforceRemote(ctx, info, job, func(infoJSON, jobJSON []byte) (enforceAnswer, error) {
		resp, err := c.rpc.EnforceMLPolicy(ctx, &pluginv1.EnforceMLPolicyRequest{Info: infoJSON, TrainJob: jobJSON, AcceptsInfoChanges: true})
		return enforceAnswer{patch: resp.GetPatch(), info: resp.GetInfo(), infoChanges: resp.GetInfoChanges()}, err
	})
}

// EnforcePodGroupPolicy sends Info and the TrainJob and applies the answer.
func (c *Client) EnforcePodGroupPolicy(ctx context.Context, info *framework.Info, job *trainer.TrainJob) error {
	return c.enforceRemote(ctx, info, job, func(infoJSON, jobJSON []byte) (enforceAnswer, error) {
		resp, err := c.rpc.EnforcePodGroupPolicy(ctx, &pluginv1.EnforcePodGroupPolicyRequest{Info: infoJSON, TrainJob: jobJSON, AcceptsInfoChanges: true})
		return enforceAnswer{patch: resp.GetPatch(), info: resp.GetInfo(), infoChanges: resp.GetInfoChanges()}, err
	})
}

// enforceRemote sends Info and the TrainJob and applies the answer to the
// Info it sent. The host accepts Info changes (protocol 1.2), patches and,
// from a plugin whose view of Info is the host's, the whole changed Info.
// It does not set accepts_info (1.1), under which a plugin built against
// an older Info would answer with a whole Info without the fields it does
// not know: such a plugin answers with a patch, which keeps them.
func (c *Client) enforceRemote(ctx context.Context, info *framework.Info, job *trainer.TrainJob, send func(infoJSON, jobJSON []byte) (enforceAnswer, error)) error {
	infoJSON, err := json.Marshal(info)
	if err != nil {
		return err
	}
	jobJSON, err := json.Marshal(job)
	if err != nil {
		return err
	}
	answer, err := send(infoJSON, jobJSON)
	if err != nil {
		return callError(err)
	}
	kinds := 0
	for _, a := range [][]byte{answer.patch, answer.infoChanges, answer.info} {
		if len(a) > 0 {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		return errors.New("the answer has more than one of patch, info_changes and info; send one of them")
	case len(answer.info) > 0:
		return ApplyInfoWithin(info, answer.info, c.limits)
	case len(answer.infoChanges) > 0:
		return applyInfoChanges(info, infoJSON, answer.infoChanges, c.limits)
	default:
		return ApplyPatchWithin(info, infoJSON, answer.patch, c.limits)
	}
}

// Build sends Info and the TrainJob and decodes the objects: each built
// object with how it is written (protocol 1.4), or, from a plugin before
// 1.4, the objects, create_once and the annotations that said the same
// (ApplyPolicyAnnotation, LiveFieldsAnnotation), which are removed.
func (c *Client) Build(ctx context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	infoJSON, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	jobJSON, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	resp, err := c.rpc.Build(ctx, &pluginv1.BuildRequest{Info: infoJSON, TrainJob: jobJSON, AcceptsBuilt: true})
	if err != nil {
		return nil, callError(err)
	}
	if built := resp.GetBuilt(); len(built) > 0 {
		if len(resp.GetObjects()) > 0 || len(resp.GetCreateOnce()) > 0 {
			return nil, errors.New("the answer has both built and objects or create_once; send built alone")
		}
		if err := c.limits.checkObjects(len(built)); err != nil {
			return nil, err
		}
		out := make([]framework.Object, 0, len(built))
		for i, b := range built {
			o, err := c.decodeObject(i, b.GetObject())
			if err != nil {
				return nil, err
			}
			obj := framework.Object{Unstructured: o, CreateOnce: b.GetCreateOnce()}
			if len(b.GetLiveFields()) > 0 || b.GetLiveHeld() != "" || b.GetLiveAdvice() != "" {
				obj.Live = &framework.LiveFields{Paths: b.GetLiveFields(), Held: b.GetLiveHeld(), Advice: b.GetLiveAdvice()}
			}
			out = append(out, obj)
		}
		return out, nil
	}
	if err := c.limits.checkObjects(len(resp.GetObjects())); err != nil {
		return nil, err
	}
	out := make([]framework.Object, 0, len(resp.GetObjects()))
	for i, data := range resp.GetObjects() {
		o, err := c.decodeObject(i, data)
		if err != nil {
			return nil, err
		}
		live, err := takeLiveFields(o)
		if err != nil {
			return nil, objectDoc(i).refuse(err)
		}
		out = append(out, framework.Object{Unstructured: o, CreateOnce: takeCreateOnce(o), Live: live})
	}
	for _, i := range resp.GetCreateOnce() {
		if int(i) >= len(out) {
			return nil, fmt.Errorf("create_once names object %d, but the answer has %d objects (indexes from 0)", i, len(out))
		}
		out[i].CreateOnce = true
	}
	return out, nil
}

// decodeObject decodes object i of a Build answer.
func (c *Client) decodeObject(i int, data []byte) (*unstructured.Unstructured, error) {
	o := &unstructured.Unstructured{}
	if err := c.limits.decode(objectDoc(i), data, &o.Object); err != nil {
		return nil, err
	}
	if o.Object == nil {
		return nil, objectDoc(i).refuse(errors.New("null where an object goes"))
	}
	return o, nil
}

// Watch asks for the plugin's extra watches.
func (c *Client) Watch(ctx context.Context) ([]framework.WatchSource, error) {
	resp, err := c.rpc.Watch(ctx, &pluginv1.WatchRequest{})
	if err != nil {
		return nil, callError(err)
	}
	var out []framework.WatchSource
	for i, s := range resp.GetSources() {
		m, ok := mappingsFromProto[s.GetMapping()]
		if !ok {
			return nil, fmt.Errorf("source %d: mapping %v is not one this host knows", i, s.GetMapping())
		}
		out = append(out, framework.WatchSource{Kind: gvkFromProto(s.GetKind()), Mapping: m, Label: s.GetLabel(), Omit: s.GetOmit()})
	}
	return out, nil
}

// Status sends the TrainJob, its owned objects and, when the host has it,
// the Info they were built from (protocol 1.5; a plugin before 1.5 ignores
// it), and decodes the status into the plugin's report: a status that
// changes a field the host writes is an error that names it.
func (c *Client) Status(ctx context.Context, info *framework.Info, job *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	req := &pluginv1.StatusRequest{Owned: make([][]byte, 0, len(owned))}
	var err error
	if req.TrainJob, err = json.Marshal(job); err != nil {
		return nil, err
	}
	if info != nil {
		if req.Info, err = json.Marshal(info); err != nil {
			return nil, err
		}
	}
	for _, o := range owned {
		data, err := o.MarshalJSON()
		if err != nil {
			return nil, err
		}
		req.Owned = append(req.Owned, data)
	}
	resp, err := c.rpc.Status(ctx, req)
	if err != nil {
		return nil, callError(err)
	}
	if len(resp.GetStatus()) == 0 {
		return nil, nil
	}
	st := &trainer.TrainJobStatus{}
	if err := c.limits.decode(statusDoc, resp.GetStatus(), st); err != nil {
		return nil, err
	}
	return statusReport(job, st)
}
