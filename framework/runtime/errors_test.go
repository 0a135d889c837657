package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// A policy key that no plugin owns is not an invalid job: enabling a
// plugin helps, and the TrainJob is retried.
func TestUnownedPolicyKeyIsNotInvalidJob(t *testing.T) {
	if err := (&frameworkruntime.UnownedPolicyKeyError{Policy: "mlPolicy", Key: "deepspeed"}); framework.IsInvalidJob(err) {
		t.Errorf("IsInvalidJob(%v) = true, want false", err)
	}
}

// A count an enforcer sets past the bound of a replicatedJob is an
// invalid job: a retry would set it again.
func TestEnforcedCountPastTheBoundIsInvalidJob(t *testing.T) {
	huge := &countSetter{&fakePlugin{desc: framework.Description{Name: "Huge", MLPolicyKeys: []string{framework.NoPolicyKey}}}, framework.MaxPodSetPods + 1}
	fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Huge", Plugin: huge}})
	info := policyInfo("")
	err := mustCycle(t, fw.Current(), info, testJob()).Enforce(context.Background(), info)
	if !framework.IsInvalidJob(err) || !strings.Contains(err.Error(), fmt.Sprint(framework.MaxPodSetPods)) {
		t.Errorf("Enforce error %v, want an invalid job naming the bound %d", err, framework.MaxPodSetPods)
	}
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
