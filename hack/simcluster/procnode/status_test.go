package procnode

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRestartPolicy(t *testing.T) {
	for _, c := range []struct {
		policy corev1.RestartPolicy
		code   int32
		want   bool
	}{
		{corev1.RestartPolicyNever, 0, false}, {corev1.RestartPolicyNever, 134, false},
		{corev1.RestartPolicyOnFailure, 0, false}, {corev1.RestartPolicyOnFailure, 1, true}, {corev1.RestartPolicyOnFailure, 137, true},
		{corev1.RestartPolicyAlways, 0, true}, {corev1.RestartPolicyAlways, 2, true},
	} {
		if got := restarts(c.policy, c.code); got != c.want {
			t.Errorf("restarts(%s, %d) = %v, want %v", c.policy, c.code, got, c.want)
		}
	}
}

func TestTerminalPhase(t *testing.T) {
	if p := terminalPhase([]int32{0, 0}); p != corev1.PodSucceeded {
		t.Errorf("all 0: %s", p)
	}
	if p := terminalPhase([]int32{0, 3}); p != corev1.PodFailed {
		t.Errorf("one 3: %s", p)
	}
	if terminatedReason(0) != "Completed" || terminatedReason(1) != "Error" {
		t.Error("reasons of exit codes")
	}
}

func TestSetConditionKeepsTheTransitionTimeOfAnUnchangedStatus(t *testing.T) {
	then := metav1.NewTime(time.Unix(1000, 0))
	s := &corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: then},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: then},
	}}
	now := metav1.Now()
	setCondition(s, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now})
	if !s.Conditions[1].LastTransitionTime.Equal(&then) {
		t.Error("an unchanged condition got a new transition time")
	}
	setCondition(s, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now})
	if !s.Conditions[1].LastTransitionTime.Equal(&now) || s.Conditions[1].Status != corev1.ConditionFalse {
		t.Errorf("a changed condition: %+v", s.Conditions[1])
	}
	setCondition(s, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse})
	if len(s.Conditions) != 3 || s.Conditions[0].Type != corev1.PodScheduled {
		t.Errorf("conditions %+v", s.Conditions)
	}
}
