package framework_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

func TestIsInvalidJob(t *testing.T) {
	cause := errors.New("numNodes must be positive")
	invalid := &framework.InvalidJobError{Err: cause}
	fieldErr := field.Invalid(field.NewPath("spec", "trainer", "numNodes"), -1, "must be positive")
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "a plain error: a retry may help", err: cause, want: false},
		{name: "an InvalidJobError", err: invalid, want: true},
		{name: "a wrapped InvalidJobError", err: fmt.Errorf("building: %w", invalid), want: true},
		{name: "a field error of the controller's own checks: the runtime may still change", err: fieldErr, want: false},
		{name: "a plugin's field error", err: &framework.PluginError{Plugin: "Torch", Point: framework.PointEnforceMLPolicy, Err: fieldErr}, want: true},
		{name: "a plugin's wrapped field error", err: &framework.PluginError{Plugin: "Torch", Point: framework.PointEnforceMLPolicy, Err: fmt.Errorf("applying overrides: %w", fieldErr)}, want: true},
		{name: "a plugin's InvalidJobError", err: &framework.PluginError{Plugin: "Torch", Point: framework.PointEnforceMLPolicy, Err: invalid}, want: true},
		{name: "a plugin's other failure", err: &framework.PluginError{Plugin: "Torch", Point: framework.PointEnforceMLPolicy, Err: cause}, want: false},
		{name: "an unowned policy key: enabling a plugin helps", err: &framework.UnownedPolicyKeyError{Policy: "mlPolicy", Key: "deepspeed"}, want: false},
		{name: "a runtime without a trainer step", err: framework.ErrNoTrainerStep, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := framework.IsInvalidJob(tc.err); got != tc.want {
				t.Errorf("IsInvalidJob(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
	if invalid.Error() != cause.Error() || !errors.Is(invalid, cause) {
		t.Errorf("InvalidJobError %q does not say and wrap its cause %q", invalid, cause)
	}
}

// The errors that say a TrainJob cannot run as it is are InvalidJob: a
// runtime patch that does not apply, and a job with too many pods.
func TestInvalidJobErrorsOfAJob(t *testing.T) {
	t.Run("a runtime patch that does not apply", func(t *testing.T) {
		job := testJob()
		job.Spec.RuntimePatches = []trainer.RuntimePatch{patch("kueue", `{"spec":`)}
		_, err := framework.NewInfo(job, frameworktest.Runtime(t, templateOf(replicatedJob("node", "trainer", "node"))))
		if !framework.IsInvalidJob(err) || !strings.Contains(err.Error(), "spec.runtimePatches[0]") {
			t.Errorf("NewInfo error %v, want an invalid job naming spec.runtimePatches[0]", err)
		}
	})
	t.Run("an enforcer's count past the bound of a replicatedJob", func(t *testing.T) {
		huge := &countSetter{&fakePlugin{desc: framework.Description{Name: "Huge", MLPolicyKeys: []string{framework.NoPolicyKey}}}, framework.MaxPodSetPods + 1}
		fw := newFrameworkOf(t, []framework.PluginSpec{{Name: "Huge", Plugin: huge}})
		info := policyInfo("")
		err := mustCycle(t, fw.Current(), info, testJob()).Enforce(context.Background(), info)
		if !framework.IsInvalidJob(err) || !strings.Contains(err.Error(), fmt.Sprint(framework.MaxPodSetPods)) {
			t.Errorf("Enforce error %v, want an invalid job naming the bound %d", err, framework.MaxPodSetPods)
		}
	})
}

// countSetter sets the trainer's pod count, as an ML plugin does from
// numNodes.
type countSetter struct {
	*fakePlugin
	count int32
}

func (p *countSetter) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	info.PodSets[0].Count = p.count
	return nil
}
