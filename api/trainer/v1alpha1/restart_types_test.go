package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestWithOverride(t *testing.T) {
	runtime := &RestartPolicy{
		MaxRestarts:     ptr.To[int32](3),
		RestartStrategy: ptr.To(BlockingRecreateStrategy),
		ExitCodes:       []ExitCodeRule{{Action: FailOnExitCode, Values: []int32{1}}},
	}
	got := runtime.WithOverride(&RestartPolicy{MaxRestarts: ptr.To[int32](0), OnPodDisruption: ptr.To(CountDisruption)})
	want := &RestartPolicy{
		MaxRestarts:     ptr.To[int32](0),
		OnPodDisruption: ptr.To(CountDisruption),
		RestartStrategy: ptr.To(BlockingRecreateStrategy),
		ExitCodes:       []ExitCodeRule{{Action: FailOnExitCode, Values: []int32{1}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithOverride (-want +got):\n%s", diff)
	}
	got.ExitCodes[0].Values[0] = 9
	if runtime.ExitCodes[0].Values[0] != 1 {
		t.Error("WithOverride aliases the runtime's policy")
	}
	if (*RestartPolicy)(nil).WithOverride(nil) != nil {
		t.Error("no policy on either side gives a policy")
	}
}
