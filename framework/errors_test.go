package framework_test

import (
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

// The errors of NewInfo that say a TrainJob cannot run as it is are
// InvalidJob: a runtime patch that does not apply. (A count an enforcer
// sets past the bound of a replicatedJob is the runtime's test.)
func TestInvalidJobErrorsOfAJob(t *testing.T) {
	t.Run("a runtime patch that does not apply", func(t *testing.T) {
		job := testJob()
		job.Spec.RuntimePatches = []trainer.RuntimePatch{patch("kueue", `{"spec":`)}
		_, err := framework.NewInfo(job, frameworktest.Runtime(t, templateOf(replicatedJob("node", "trainer", "node"))))
		if !framework.IsInvalidJob(err) || !strings.Contains(err.Error(), "spec.runtimePatches[0]") {
			t.Errorf("NewInfo error %v, want an invalid job naming spec.runtimePatches[0]", err)
		}
	})
}
