package framework

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Labels the framework sets on every built object.
const (
	// TrainJobNameLabel names the TrainJob an object was built for.
	TrainJobNameLabel = "trainer.kubeflow.org/trainjob-name"
	// ManagedByLabel marks objects built by Trainforge.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is ManagedByLabel's value.
	ManagedByValue = "trainforge"
)

// Object is one object a Builder builds, and how the host writes it.
type Object struct {
	*unstructured.Unstructured
	// CreateOnce has the host create the object when it does not exist
	// and never update it after: a generated secret (an SSH key, a token)
	// that must stay the same for the TrainJob's whole life, across
	// restarts of the controller and suspensions of the job. Such an
	// object may differ on every Build (a new random key each time): only
	// the first one created counts, so sdktest leaves its content out of
	// the determinism check. Its kind and name must stay the same.
	// Otherwise the host server-side applies the object on every change of
	// its desired state.
	CreateOnce bool
	// Live, when set, lists the fields the host may change while the
	// object runs. A running suspendable object (one with spec.suspend
	// false) is otherwise left as it is until it is suspended, since its
	// pod templates are immutable.
	Live *LiveFields
}

// LiveFields are the fields of a running object that the host may change
// in place, and what the user reads when they may not. The JobSet plugin
// lists the parallelism and completions of an elastic step's Job, which
// JobSet's ElasticJobSet feature gate lets change in place.
type LiveFields struct {
	// Paths are JSON pointers (RFC 6901) into the object. The host writes
	// those whose value differs from the running object's by one JSON
	// patch, and nothing else.
	Paths []string
	// Held, when set, says why the fields may not change now (the
	// TrainJob's queue admitted it at its size): the host leaves them, and
	// the TrainJob's Resized condition says so.
	Held string
	// Advice says what would let a change through, for the user to read
	// when the API server refuses it or Held holds it.
	Advice string
}

// Apply returns objs as Build returns objects the host applies on every
// change of their desired state.
func Apply(objs ...*unstructured.Unstructured) []Object {
	out := make([]Object, len(objs))
	for i, o := range objs {
		out[i] = Object{Unstructured: o}
	}
	return out
}

// CreateOnce returns obj as Build returns an object the host creates
// once and never updates (Object.CreateOnce).
//
//	secret, err := framework.ToObject(info, s, corev1.SchemeGroupVersion.WithKind("Secret"))
//	...
//	return []framework.Object{framework.CreateOnce(secret)}, nil
func CreateOnce(obj *unstructured.Unstructured) Object {
	return Object{Unstructured: obj, CreateOnce: true}
}

// RuntimeCheckJob returns the TrainJob that stands for a runtime named
// name on the runtime's admission: named as the runtime, overriding
// nothing.
func RuntimeCheckJob(name string) *trainer.TrainJob {
	job := &trainer.TrainJob{}
	job.Name = name
	job.Spec.RuntimeRef.Name = name
	return job
}

// RuntimeCheck is the request that validates a runtime named name, whose
// Info is info.
func RuntimeCheck(info *Info, name string) ValidateRequest {
	return ValidateRequest{Kind: ValidateRuntime, Info: info, NewJob: RuntimeCheckJob(name)}
}

// UnstructuredOf returns the objects of objs, for code that reads what
// Build returned.
func UnstructuredOf(objs []Object) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Unstructured)
	}
	return out
}
