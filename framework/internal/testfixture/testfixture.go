// Package testfixture holds the small fixtures that the tests of package
// framework, framework/runtime and framework/remote build on: a TrainJob and
// an Info whose runtime sets given policies. It is internal so that it
// stays out of the plugin authors' surface (package frameworktest is
// theirs).
package testfixture

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// TrainJob returns a TrainJob "job" in namespace "team-a" with runtime
// "rt", overriding nothing.
func TrainJob() *trainer.TrainJob {
	return &trainer.TrainJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "team-a", UID: types.UID("uid-1234")},
		Spec:       trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "rt"}},
	}
}

// InfoWith returns an Info whose runtime sets the given policies (raw
// JSON, empty for none).
func InfoWith(mlPolicy, podGroupPolicy string) *framework.Info {
	info := &framework.Info{Version: framework.InfoVersion}
	if mlPolicy != "" {
		info.RuntimePolicy.MLPolicy = json.RawMessage(mlPolicy)
	}
	if podGroupPolicy != "" {
		info.RuntimePolicy.PodGroupPolicy = json.RawMessage(podGroupPolicy)
	}
	return info
}

// StatusBeforeReport is a plugin named "Old" whose Status has the
// signature of the SDK before framework.StatusReport: it compiles, but
// implements no StatusReporter, and every host must refuse it.
type StatusBeforeReport struct{}

// Describe names the plugin "Old".
func (StatusBeforeReport) Describe() framework.Description {
	return framework.Description{Name: "Old"}
}

// Status has the earlier SDK's signature.
func (StatusBeforeReport) Status(context.Context, *framework.Info, *trainer.TrainJob, []*unstructured.Unstructured) (*trainer.TrainJobStatus, error) {
	return nil, nil
}
