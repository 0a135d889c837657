package remote

import (
	"bytes"
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

// Server serves a framework.Plugin as the PluginService. Each method
// decodes the JSON of the request, calls the plugin and encodes its answer;
// Enforce answers are computed from the plugin's changes to Info
// (answerEnforce), so a plugin only changes a Go struct. A point the plugin's type does
// not implement answers UNIMPLEMENTED.
type Server struct {
	pluginv1.UnimplementedPluginServiceServer
	plugin framework.Plugin
	impl   framework.Implementation
	// stale is what framework.CheckImplementation says of the plugin: its
	// Describe answers it, so that the host refuses the plugin at its
	// start, naming the method.
	stale error
}

// NewServer returns the PluginService of p.
func NewServer(p framework.Plugin) *Server {
	return &Server{plugin: p, impl: framework.ImplementationOf(p), stale: framework.CheckImplementation(p)}
}

var _ pluginv1.PluginServiceServer = (*Server)(nil)

// Describe answers with the plugin's description and the points its type
// implements.
func (s *Server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	if s.stale != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "plugin %s: %v", s.plugin.Describe().Name, s.stale)
	}
	return descriptionToProto(s.plugin.Describe(), s.impl.Points()), nil
}

// Configure passes the args to a Configurable plugin. A plugin that takes
// no args accepts none and refuses any.
func (s *Server) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	args := json.RawMessage(req.GetArgs())
	c := s.impl.Configurable
	if c == nil {
		if len(args) > 0 && string(args) != "null" {
			return nil, status.Error(codes.InvalidArgument, "the plugin takes no args")
		}
		return &pluginv1.ConfigureResponse{}, nil
	}
	if len(args) == 0 {
		args = nil
	}
	if err := c.Configure(ctx, args); err != nil {
		return nil, statusOf(codes.InvalidArgument, err)
	}
	return &pluginv1.ConfigureResponse{}, nil
}

// Validate checks a TrainJob.
func (s *Server) Validate(ctx context.Context, req *pluginv1.ValidateRequest) (*pluginv1.ValidateResponse, error) {
	v := s.impl.Validator
	if v == nil {
		return s.UnimplementedPluginServiceServer.Validate(ctx, req)
	}
	info, err := decodeRequestInfo(req.GetInfo())
	if err != nil {
		return nil, err
	}
	var oldJob *trainer.TrainJob
	if len(req.GetOldTrainJob()) > 0 {
		if oldJob, err = decodeJob("old_train_job", req.GetOldTrainJob()); err != nil {
			return nil, err
		}
	}
	newJob, err := decodeJob("new_train_job", req.GetNewTrainJob())
	if err != nil {
		return nil, err
	}
	r := framework.ValidateRequest{Kind: framework.ValidateTrainJob, Info: info, OldJob: oldJob, NewJob: newJob}
	// A host before protocol 1.3 says a runtime check with the annotation
	// alone; a later one with both.
	if takeRuntimeCheck(newJob) && req.GetKind() == pluginv1.ValidationKind_VALIDATION_KIND_UNSPECIFIED ||
		req.GetKind() == pluginv1.ValidationKind_VALIDATION_KIND_RUNTIME {
		r.Kind = framework.ValidateRuntime
	}
	warnings, errs, err := v.Validate(ctx, r)
	if err != nil {
		return nil, statusOf(codes.Internal, err)
	}
	return &pluginv1.ValidateResponse{Warnings: warnings, FieldErrors: fieldErrorsToProto(errs)}, nil
}

// EnforceMLPolicy runs the plugin's EnforceMLPolicy and answers with the
// patch of its changes.
func (s *Server) EnforceMLPolicy(ctx context.Context, req *pluginv1.EnforceMLPolicyRequest) (*pluginv1.EnforceMLPolicyResponse, error) {
	e := s.impl.MLPolicyEnforcer
	if e == nil {
		return s.UnimplementedPluginServiceServer.EnforceMLPolicy(ctx, req)
	}
	accepts := acceptedAnswers{info: req.GetAcceptsInfo(), infoChanges: req.GetAcceptsInfoChanges()}
	a, err := enforce(req.GetInfo(), req.GetTrainJob(), accepts, func(info *framework.Info, job *trainer.TrainJob) error {
		return e.EnforceMLPolicy(ctx, info, job)
	})
	if err != nil {
		return nil, err
	}
	return &pluginv1.EnforceMLPolicyResponse{Patch: a.patch, Info: a.info, InfoChanges: a.infoChanges}, nil
}

// EnforcePodGroupPolicy runs the plugin's EnforcePodGroupPolicy and answers
// with the patch of its changes.
func (s *Server) EnforcePodGroupPolicy(ctx context.Context, req *pluginv1.EnforcePodGroupPolicyRequest) (*pluginv1.EnforcePodGroupPolicyResponse, error) {
	e := s.impl.PodGroupPolicyEnforcer
	if e == nil {
		return s.UnimplementedPluginServiceServer.EnforcePodGroupPolicy(ctx, req)
	}
	accepts := acceptedAnswers{info: req.GetAcceptsInfo(), infoChanges: req.GetAcceptsInfoChanges()}
	a, err := enforce(req.GetInfo(), req.GetTrainJob(), accepts, func(info *framework.Info, job *trainer.TrainJob) error {
		return e.EnforcePodGroupPolicy(ctx, info, job)
	})
	if err != nil {
		return nil, err
	}
	return &pluginv1.EnforcePodGroupPolicyResponse{Patch: a.patch, Info: a.info, InfoChanges: a.infoChanges}, nil
}

// enforceAnswer is a plugin's Enforce answer: a patch, Info changes, or
// the whole changed Info (all empty: no change).
type enforceAnswer struct{ patch, infoChanges, info []byte }

// enforce decodes the request, lets fn change Info and answers with its
// changes (answerEnforce).
func enforce(infoJSON, jobJSON []byte, accepts acceptedAnswers, fn func(*framework.Info, *trainer.TrainJob) error) (enforceAnswer, error) {
	info, err := decodeRequestInfo(infoJSON)
	if err != nil {
		return enforceAnswer{}, err
	}
	job, err := decodeJob("train_job", jobJSON)
	if err != nil {
		return enforceAnswer{}, err
	}
	return answerEnforce(info, infoJSON, accepts, func() error { return fn(info, job) })
}

// acceptedAnswers are the Enforce answers a host accepts besides a patch,
// as its request says.
type acceptedAnswers struct {
	info        bool // accepts_info (protocol 1.1)
	infoChanges bool // accepts_info_changes (protocol 1.2)
}

// answerEnforce runs change, which changes info, the plugin's decoding of
// the request's Info (infoJSON) into its own Info type, and answers with
// what changed, computed from info as decoded to info as changed, both
// encoded by this binary: so it never mentions a field that info's type
// does not have, and the host, which applies it to the Info it sent, keeps
// such fields.
//
// When info as decoded encodes to the request's Info byte for byte, the
// plugin's view of Info is the host's: it dropped nothing, and the whole
// changed Info is the cheapest exact answer for both ends. Otherwise (a
// plugin built against another Info than the host's) it answers with Info
// changes, or a JSON Patch to a host before protocol 1.2.
func answerEnforce(info any, infoJSON []byte, accepts acceptedAnswers, change func() error) (enforceAnswer, error) {
	before, err := json.Marshal(info)
	if err != nil {
		return enforceAnswer{}, status.Errorf(codes.Internal, "info: %v", err)
	}
	if err := change(); err != nil {
		return enforceAnswer{}, statusOf(codes.Unknown, err)
	}
	after, err := json.Marshal(info)
	if err != nil {
		return enforceAnswer{}, status.Errorf(codes.Internal, "encoding the changed Info: %v", err)
	}
	switch {
	case bytes.Equal(before, after):
		return enforceAnswer{}, nil
	case (accepts.info || accepts.infoChanges) && bytes.Equal(before, infoJSON):
		return enforceAnswer{info: after}, nil
	case accepts.infoChanges:
		changes, err := CreateChanges(before, after)
		if err != nil {
			return enforceAnswer{}, status.Errorf(codes.Internal, "computing the changes of Info: %v", err)
		}
		return enforceAnswer{infoChanges: changes}, nil
	}
	patch, err := CreateChangesPatch(before, after)
	if err != nil {
		return enforceAnswer{}, status.Errorf(codes.Internal, "computing the patch of the changed Info: %v", err)
	}
	return enforceAnswer{patch: patch}, nil
}

// Build answers with the plugin's objects.
func (s *Server) Build(ctx context.Context, req *pluginv1.BuildRequest) (*pluginv1.BuildResponse, error) {
	b := s.impl.Builder
	if b == nil {
		return s.UnimplementedPluginServiceServer.Build(ctx, req)
	}
	info, err := decodeRequestInfo(req.GetInfo())
	if err != nil {
		return nil, err
	}
	job, err := decodeJob("train_job", req.GetTrainJob())
	if err != nil {
		return nil, err
	}
	objs, err := b.Build(ctx, info, job)
	if err != nil {
		return nil, statusOf(codes.Unknown, err)
	}
	resp := &pluginv1.BuildResponse{}
	if req.GetAcceptsBuilt() {
		resp.Built = make([]*pluginv1.BuiltObject, 0, len(objs))
	} else {
		resp.Objects = make([][]byte, 0, len(objs))
	}
	for i, built := range objs {
		o := built.Unstructured
		if o == nil {
			return nil, status.Errorf(codes.Internal, "object %d is nil", i)
		}
		if !req.GetAcceptsBuilt() {
			// A host before 1.4: the field for hosts since 1.3, the
			// annotations for older ones and for live fields.
			if built.CreateOnce {
				resp.CreateOnce = append(resp.CreateOnce, uint32(i))
				o = markCreateOnce(o)
			}
			if built.Live != nil {
				var err error
				if o, err = markLiveFields(o, built.Live.Paths); err != nil {
					return nil, status.Errorf(codes.Internal, "encoding the live fields of object %d (%s %s): %v", i, o.GetKind(), o.GetName(), err)
				}
			}
		}
		data, err := o.MarshalJSON()
		if err != nil {
			return nil, status.Errorf(codes.Internal, "encoding object %d (%s %s): %v", i, o.GetKind(), o.GetName(), err)
		}
		if !req.GetAcceptsBuilt() {
			resp.Objects = append(resp.Objects, data)
			continue
		}
		b := &pluginv1.BuiltObject{Object: data, CreateOnce: built.CreateOnce}
		if l := built.Live; l != nil {
			b.LiveFields, b.LiveHeld, b.LiveAdvice = l.Paths, l.Held, l.Advice
		}
		resp.Built = append(resp.Built, b)
	}
	return resp, nil
}

// Watch answers with the plugin's extra watches.
func (s *Server) Watch(ctx context.Context, req *pluginv1.WatchRequest) (*pluginv1.WatchResponse, error) {
	w := s.impl.Watcher
	if w == nil {
		return s.UnimplementedPluginServiceServer.Watch(ctx, req)
	}
	sources, err := w.Watch(ctx)
	if err != nil {
		return nil, statusOf(codes.Unknown, err)
	}
	resp := &pluginv1.WatchResponse{}
	for _, src := range sources {
		resp.Sources = append(resp.Sources, &pluginv1.WatchSource{Kind: gvkToProto(src.Kind), Mapping: mappingsToProto[src.Mapping], Label: src.Label, Omit: src.Omit})
	}
	return resp, nil
}

// Status answers with the plugin's view of the TrainJob's status. The
// plugin gets the request's Info, or nil when it has none (a host that has
// none, or one before protocol 1.5).
func (s *Server) Status(ctx context.Context, req *pluginv1.StatusRequest) (*pluginv1.StatusResponse, error) {
	r := s.impl.StatusReporter
	if r == nil {
		return s.UnimplementedPluginServiceServer.Status(ctx, req)
	}
	var info *framework.Info
	if len(req.GetInfo()) > 0 {
		var err error
		if info, err = decodeRequestInfo(req.GetInfo()); err != nil {
			return nil, err
		}
	}
	job, err := decodeJob("train_job", req.GetTrainJob())
	if err != nil {
		return nil, err
	}
	owned := make([]*unstructured.Unstructured, 0, len(req.GetOwned()))
	for i, data := range req.GetOwned() {
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(data); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "owned[%d]: %v", i, err)
		}
		owned = append(owned, o)
	}
	st, err := r.Status(ctx, info, job, owned)
	if err != nil {
		return nil, statusOf(codes.Unknown, err)
	}
	if st == nil {
		return &pluginv1.StatusResponse{}, nil
	}
	data, err := json.Marshal(st)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encoding the status: %v", err)
	}
	return &pluginv1.StatusResponse{Status: data}, nil
}

// decodeRequestInfo decodes the Info of a request and checks its version.
func decodeRequestInfo(data []byte) (*framework.Info, error) {
	info := &framework.Info{}
	if err := json.Unmarshal(data, info); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "info: %v", err)
	}
	if info.Version != framework.InfoVersion {
		return nil, status.Errorf(codes.InvalidArgument, "info: version %q, this plugin knows %q", info.Version, framework.InfoVersion)
	}
	return info, nil
}

func decodeJob(name string, data []byte) (*trainer.TrainJob, error) {
	job := &trainer.TrainJob{}
	if err := json.Unmarshal(data, job); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", name, err)
	}
	return job, nil
}

// statusOf keeps the status of an error that has one; others get code, or
// INVALID_ARGUMENT for field errors.
func statusOf(code codes.Code, err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	// The protocol's code for input that is wrong, which no retry fixes.
	var fe *field.Error
	if errors.As(err, &fe) || framework.IsInvalidJob(err) {
		code = codes.InvalidArgument
	}
	return status.Error(code, fmt.Sprint(err))
}
