package runtime_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// TestUnavailableIsNotSkippedUnderIgnore: a plugin that took no call (its
// host had no free capacity, or it is down) gave no answer, so under
// Ignore too a phase of the reconcile fails with it, naming the plugin,
// and nothing is counted as ignored: the TrainJob is retried instead of
// going on without the plugin. At admission it is skipped with a warning,
// as any failure under Ignore.
func TestUnavailableIsNotSkippedUnderIgnore(t *testing.T) {
	for _, policy := range []frameworkruntime.FailurePolicy{frameworkruntime.FailurePolicyIgnore, frameworkruntime.FailurePolicyFail} {
		for _, tc := range policyCases() {
			t.Run(fmt.Sprintf("%s/%s", policy, tc.name), func(t *testing.T) {
				cause := &framework.UnavailableError{Err: errors.New("no instance of the plugin was free within 1s")}
				good1, good2 := goodPlugins()
				fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{
					{Name: "Good1", Plugin: good1},
					{Name: "Faulty", Plugin: tc.faulty(cause), FailurePolicy: policy},
					{Name: "Good2", Plugin: good2},
				})
				metrics := snapshot(t, []string{"Faulty"}, []framework.ExtensionPoint{tc.point})

				got, ignored, err := tc.run(t, fw.Current())

				want := map[string]pointMetrics{"Faulty." + string(tc.point): {Calls: 1, Errors: 1, Durations: 1}}
				if tc.point == framework.PointValidate {
					if policy == frameworkruntime.FailurePolicyIgnore {
						if len(got.Errs) != 0 || len(got.Warnings) != 3 {
							t.Errorf("Validate under Ignore: errors %v, warnings %q; want no error and the skip's warning", got.Errs, got.Warnings)
						}
						want = map[string]pointMetrics{"Faulty." + string(tc.point): {Calls: 1, Errors: 1, Ignored: 1, Durations: 1}}
					} else if len(got.Errs) != 1 {
						t.Errorf("Validate under Fail: errors %v, want the plugin's", got.Errs)
					}
				} else {
					var pe *framework.PluginError
					if !errors.As(err, &pe) || pe.Plugin != "Faulty" || pe.Point != tc.point {
						t.Fatalf("error %v (%T), want a *PluginError of Faulty's %s", err, err, tc.point)
					}
					if !framework.IsUnavailable(err) || !errors.Is(err, cause) {
						t.Errorf("error %v does not wrap the UnavailableError", err)
					}
					if len(ignored) != 0 {
						t.Errorf("ignored %v: a plugin that took no call was skipped", ignored)
					}
				}
				if diff := cmp.Diff(want, metrics.since()); diff != "" {
					t.Errorf("metrics change (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestIsUnavailable(t *testing.T) {
	u := &framework.UnavailableError{Err: errors.New("down")}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{u, true},
		{&framework.PluginError{Plugin: "P", Point: framework.PointBuild, Err: u}, true},
		{fmt.Errorf("calling: %w", u), true},
		{errors.New("down"), false},
		{nil, false},
	} {
		if got := framework.IsUnavailable(tc.err); got != tc.want {
			t.Errorf("IsUnavailable(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}
