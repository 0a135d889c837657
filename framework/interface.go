package framework

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// ExtensionPoint names one extension point.
type ExtensionPoint string

// The extension points, in the order a reconcile calls them.
const (
	PointConfigure             ExtensionPoint = "Configure"
	PointValidate              ExtensionPoint = "Validate"
	PointEnforceMLPolicy       ExtensionPoint = "EnforceMLPolicy"
	PointEnforcePodGroupPolicy ExtensionPoint = "EnforcePodGroupPolicy"
	PointBuild                 ExtensionPoint = "Build"
	PointWatch                 ExtensionPoint = "Watch"
	PointStatus                ExtensionPoint = "Status"
)

// Policy keys with a special meaning in Description.MLPolicyKeys and
// Description.PodGroupPolicyKeys.
const (
	// AnyPolicyKey owns every job, whatever its policy.
	AnyPolicyKey = "*"
	// NoPolicyKey owns the jobs whose policy sets no key (PlainML).
	NoPolicyKey = ""
)

// Description is what a plugin says about itself.
type Description struct {
	// Name is the plugin's name, as the configuration file names it.
	Name string `json:"name"`
	// Version is the plugin's own version.
	Version string `json:"version,omitempty"`
	// MLPolicyKeys are the mlPolicy keys the plugin owns.
	MLPolicyKeys []string `json:"mlPolicyKeys,omitempty"`
	// PodGroupPolicyKeys are the podGroupPolicy keys the plugin owns.
	PodGroupPolicyKeys []string `json:"podGroupPolicyKeys,omitempty"`
	// Builds are the kinds of the objects the plugin builds.
	Builds []schema.GroupVersionKind `json:"builds,omitempty"`
}

// Plugin is implemented by every plugin: Describe says what the plugin is,
// and the extension-point interfaces its type implements say what it does.
// Nothing else describes a plugin: the framework finds the interfaces once,
// when it compiles its plugin set (ImplementationOf), and the plugin
// protocol lists them in its Describe answer from the served plugin's type.
//
// A plugin that owns no policy key takes part in every job; one that owns
// keys takes part only in the jobs whose runtime sets one of them.
type Plugin interface {
	Describe() Description
}

// Configurable takes the plugin's args from the configuration file. A bad
// argument fails the controller's start-up.
type Configurable interface {
	Configure(ctx context.Context, args json.RawMessage) error
}

// Validator checks a TrainJob, or a runtime, on the admission path. Field
// errors name the field at fault and reject the object; err says that the
// check itself failed (a plugin out of process that could not be reached),
// which the plugin's failure policy decides on.
type Validator interface {
	Validate(ctx context.Context, req ValidateRequest) (warnings []string, errs field.ErrorList, err error)
}

// ValidationKind says what a Validate call checks.
type ValidationKind string

const (
	// ValidateTrainJob checks a TrainJob being created or updated. It is
	// the zero value's meaning too.
	ValidateTrainJob ValidationKind = "TrainJob"
	// ValidateRuntime checks a TrainingRuntime or ClusterTrainingRuntime
	// being created or updated: NewJob stands for it (named as the
	// runtime, overriding nothing). Report then only what is wrong with the
	// runtime itself: a default that a TrainJob can override
	// (mlPolicy.numNodes, say) is not yet an error.
	ValidateRuntime ValidationKind = "Runtime"
)

// ValidateRequest is what Validate checks.
type ValidateRequest struct {
	// Kind is what is admitted: a TrainJob (ValidateTrainJob, or empty) or
	// a runtime (ValidateRuntime).
	Kind ValidationKind
	// Info is built from the runtime and the TrainJob's overrides, before
	// any Enforce point; nil when it could not be built.
	Info *Info
	// OldJob is the stored TrainJob; nil on create and for a runtime.
	OldJob *trainer.TrainJob
	// NewJob is the TrainJob as submitted, or the runtime's stand-in.
	NewJob *trainer.TrainJob
}

// IsRuntime reports whether a runtime is validated rather than a TrainJob.
func (r ValidateRequest) IsRuntime() bool { return r.Kind == ValidateRuntime }

// MLPolicyEnforcer changes Info according to the mlPolicy key it owns.
type MLPolicyEnforcer interface {
	EnforceMLPolicy(ctx context.Context, info *Info, job *trainer.TrainJob) error
}

// PodGroupPolicyEnforcer changes Info according to the podGroupPolicy key
// it owns.
type PodGroupPolicyEnforcer interface {
	EnforcePodGroupPolicy(ctx context.Context, info *Info, job *trainer.TrainJob) error
}

// Builder builds objects from Info. Each object must be of a kind the
// plugin declares in Description.Builds; the framework sets its namespace,
// owner reference and managed-by labels. Each says how the host writes it
// (Object.CreateOnce; Apply and CreateOnce make them).
type Builder interface {
	Build(ctx context.Context, info *Info, job *trainer.TrainJob) ([]Object, error)
}

// Mapping says how an object of a watched kind maps to its TrainJob.
type Mapping string

const (
	// MapByOwner maps an object to the TrainJob that is its controller owner.
	MapByOwner Mapping = "OwnerReference"
	// MapByLabel maps an object to the TrainJob named by a label's value, in
	// the object's namespace.
	MapByLabel Mapping = "Label"
)

// WatchSource is one kind the controller watches for a plugin.
type WatchSource struct {
	Kind    schema.GroupVersionKind `json:"kind"`
	Mapping Mapping                 `json:"mapping"`
	// Label is the label that names the TrainJob, with MapByLabel.
	Label string `json:"label,omitempty"`
	// Omit lists fields of the kind that the controller's cache need not
	// keep, as field paths (package fieldpath: JSON names joined by dots,
	// a list's name followed by [], such as
	// spec.replicatedJobs[].template.spec.template): they are cleared from
	// every object of the kind before it is cached, so the plugin's Status
	// and the controller never see them. A plugin that builds a kind whose
	// objects are mostly pod templates it never reads back declares them
	// here, and each cached object costs a fraction of the memory and of
	// the copies made of it. A field is cleared only when every plugin that
	// watches the kind through the same mapping omits it; managedFields
	// are never cached.
	Omit []string `json:"omit,omitempty"`
}

// WatchKey is what makes two WatchSources one watch: the kind and how its
// objects map to TrainJobs, whatever each omits.
type WatchKey struct {
	Kind    schema.GroupVersionKind
	Mapping Mapping
	Label   string
}

// Key returns the watch w is one source of.
func (w WatchSource) Key() WatchKey {
	return WatchKey{Kind: w.Kind, Mapping: w.Mapping, Label: w.Label}
}

// Watcher declares kinds the controller must watch for the plugin, besides
// the kinds it builds (which are always watched through their owner).
type Watcher interface {
	Watch(ctx context.Context) ([]WatchSource, error)
}

// StatusReporter turns the objects owned by a TrainJob into a report of
// its status (StatusReport), which the host merges with the other
// plugins' (ApplyTo).
// owned holds the objects of the kinds the plugin builds, as the
// controller's cache holds them: without managedFields, and without the
// fields that the watches of their kind omit (WatchSource.Omit; the
// built-in JobSet plugin omits its JobSets' pod templates). It returns nil
// when it has nothing to report yet.
//
// info is the job's Info as Build received it (after every Enforce
// point), which the plugin must not change: what the objects were built
// from, so that a plugin keeps no state of its own on them. It is nil when
// the host has none: the job's runtime is not known (deleted, and the job
// has no snapshot of it), the status is read without a build (a finished
// job following its Jobs, objects deleted after they finished), or, out of
// process, the host is older than protocol 1.5. Without it a plugin
// reports only what the objects say, and leaves out what it cannot know.
type StatusReporter interface {
	Status(ctx context.Context, info *Info, job *trainer.TrainJob, owned []*unstructured.Unstructured) (*StatusReport, error)
}

// Factory creates a plugin, given the host's facts (Handle). cmd/
// registers one per built-in; sdk.ServeFactory serves one out of process.
type Factory func(Handle) Plugin

// Implementation is what one plugin implements: one field per extension
// point, nil where the plugin implements none. The framework takes it once
// per plugin set, so that no call asserts a type.
type Implementation struct {
	Configurable           Configurable
	Validator              Validator
	MLPolicyEnforcer       MLPolicyEnforcer
	PodGroupPolicyEnforcer PodGroupPolicyEnforcer
	Builder                Builder
	Watcher                Watcher
	StatusReporter         StatusReporter
}

// ImplementationOf returns the extension points p's type implements.
func ImplementationOf(p Plugin) Implementation {
	var impl Implementation
	impl.Configurable, _ = p.(Configurable)
	impl.Validator, _ = p.(Validator)
	impl.MLPolicyEnforcer, _ = p.(MLPolicyEnforcer)
	impl.PodGroupPolicyEnforcer, _ = p.(PodGroupPolicyEnforcer)
	impl.Builder, _ = p.(Builder)
	impl.Watcher, _ = p.(Watcher)
	impl.StatusReporter, _ = p.(StatusReporter)
	return impl
}

// statusBeforeReport is StatusReporter's method as it was before
// StatusReport: a plugin whose Status still has this signature compiles,
// but implements no StatusReporter, and would report nothing.
type statusBeforeReport interface {
	Status(ctx context.Context, info *Info, job *trainer.TrainJob, owned []*unstructured.Unstructured) (*trainer.TrainJobStatus, error)
}

// CheckImplementation returns an error when p's type has an extension
// point's method with the signature of an earlier SDK, which the host
// would never call: a plugin must say so at its start rather than lose
// the point without a word.
func CheckImplementation(p Plugin) error {
	if _, ok := p.(statusBeforeReport); ok {
		return errors.New("its Status method returns *trainer.TrainJobStatus, the signature before framework.StatusReport, so the host would never call it: " +
			"return *framework.StatusReport (conditions, jobsStatus, restarts, nodes)")
	}
	return nil
}

// Only returns the implementation of the points listed, of those i has:
// what a plugin behind the plugin protocol implements, whose client has a
// method for every point.
func (i Implementation) Only(points []ExtensionPoint) Implementation {
	var out Implementation
	for _, p := range points {
		switch p {
		case PointConfigure:
			out.Configurable = i.Configurable
		case PointValidate:
			out.Validator = i.Validator
		case PointEnforceMLPolicy:
			out.MLPolicyEnforcer = i.MLPolicyEnforcer
		case PointEnforcePodGroupPolicy:
			out.PodGroupPolicyEnforcer = i.PodGroupPolicyEnforcer
		case PointBuild:
			out.Builder = i.Builder
		case PointWatch:
			out.Watcher = i.Watcher
		case PointStatus:
			out.StatusReporter = i.StatusReporter
		}
	}
	return out
}

// Implements reports whether the implementation has an extension point.
func (i Implementation) Implements(point ExtensionPoint) bool {
	return slices.Contains(i.Points(), point)
}

// Points lists the extension points of the implementation, in the order of
// a reconcile: what a plugin's Describe answer says it implements.
func (i Implementation) Points() []ExtensionPoint {
	var out []ExtensionPoint
	for _, p := range []struct {
		ok    bool
		point ExtensionPoint
	}{
		{i.Configurable != nil, PointConfigure},
		{i.Validator != nil, PointValidate},
		{i.MLPolicyEnforcer != nil, PointEnforceMLPolicy},
		{i.PodGroupPolicyEnforcer != nil, PointEnforcePodGroupPolicy},
		{i.Builder != nil, PointBuild},
		{i.Watcher != nil, PointWatch},
		{i.StatusReporter != nil, PointStatus},
	} {
		if p.ok {
			out = append(out, p.point)
		}
	}
	return out
}
