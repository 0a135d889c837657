package procnode

import (
	"slices"
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

func TestContainerRestartRulesComeBeforeTheRestartPolicies(t *testing.T) {
	never := corev1.ContainerRestartPolicy(corev1.RestartPolicyNever)
	rules := &corev1.Container{RestartPolicy: &never, RestartPolicyRules: []corev1.ContainerRestartRule{
		{Action: corev1.ContainerRestartRuleActionRestart, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
			Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{134, 42},
		}},
	}}
	notIn := &corev1.Container{RestartPolicy: &never, RestartPolicyRules: []corev1.ContainerRestartRule{
		{Action: corev1.ContainerRestartRuleActionRestart, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{
			Operator: corev1.ContainerRestartRuleOnExitCodesOpNotIn, Values: []int32{0, 1},
		}},
	}}
	for _, tc := range []struct {
		name string
		pod  corev1.RestartPolicy
		c    *corev1.Container
		code int32
		want bool
	}{
		{"no rules: the pod's policy", corev1.RestartPolicyOnFailure, &corev1.Container{}, 1, true},
		{"no rules: the pod's Never", corev1.RestartPolicyNever, &corev1.Container{}, 1, false},
		{"a rule's exit code restarts under a pod's Never", corev1.RestartPolicyNever, rules, 134, true},
		{"the rule's other exit code", corev1.RestartPolicyNever, rules, 42, true},
		{"no rule matches: the container's Never", corev1.RestartPolicyOnFailure, rules, 1, false},
		{"NotIn matches what it does not list", corev1.RestartPolicyNever, notIn, 137, true},
		{"NotIn leaves what it lists to the container's policy", corev1.RestartPolicyNever, notIn, 1, false},
	} {
		if got := containerRestarts(tc.pod, tc.c, tc.code); got != tc.want {
			t.Errorf("%s: exit %d restarts %v, want %v", tc.name, tc.code, got, tc.want)
		}
	}
}

func TestTheFirstFailureRestartsAtOnceAndTheBackoffDelaysTheNext(t *testing.T) {
	c := &container{}
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	var got []time.Duration
	// Failures 1 s apart: at once, then 10 s, 20 s, 40 s...
	for i := range 5 {
		got = append(got, c.nextRestart(at.Add(time.Duration(i)*time.Second), 10*time.Second))
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("delays %v, want %v", got, want)
	}
	// A failure long after the last starts the back-off again.
	if d := c.nextRestart(at.Add(time.Hour), 10*time.Second); d != 0 {
		t.Errorf("a failure an hour later waits %s, want none", d)
	}
}
