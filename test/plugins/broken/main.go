// Command broken is a Trainforge plugin, written with the SDK, that lacks
// several of the properties every plugin must have, each in a way that
// leaves the others checkable: it shows what trainforge-plugin-conformance
// says about a broken plugin.
//
//   - EnforceMLPolicy appends a variable instead of upserting it, so a
//     second pass over its own result changes Info (not idempotent).
//   - Build names its ConfigMap after a counter, so two Builds of the same
//     input differ (not deterministic), and also returns a Secret, a kind
//     it does not declare.
//   - Validate reports a field error that names no field.
//   - Status reports a condition with a reason the API server refuses.
//
// It owns the mlPolicy key "broken".
package main

import (
	"context"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/sdk"
)

var configMap = corev1.SchemeGroupVersion.WithKind("ConfigMap")

type broken struct{ builds atomic.Int64 }

func (*broken) Describe() framework.Description {
	return framework.Description{Name: "Broken", Version: "v0.0.1", MLPolicyKeys: []string{"broken"}, Builds: []schema.GroupVersionKind{configMap}}
}

func (*broken) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	_, c, err := info.Trainer()
	if err != nil {
		return err
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "STEP", Value: "1"})
	return nil
}

func (b *broken) Build(_ context.Context, _ *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	cm := &unstructured.Unstructured{}
	cm.SetGroupVersionKind(configMap)
	cm.SetName(fmt.Sprintf("%s-%d", job.Name, b.builds.Add(1)))
	secret := &unstructured.Unstructured{}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	secret.SetName(job.Name)
	return framework.Apply(cm, secret), nil
}

func (*broken) Validate(context.Context, framework.ValidateRequest) ([]string, field.ErrorList, error) {
	return nil, field.ErrorList{{Type: field.ErrorTypeInvalid, Detail: "something is wrong somewhere"}}, nil
}

func (*broken) Status(context.Context, *framework.Info, *trainer.TrainJob, []*unstructured.Unstructured) (*framework.StatusReport, error) {
	return &framework.StatusReport{Conditions: []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue, Reason: "all done"}}}, nil
}

func main() { sdk.Serve(&broken{}) }
