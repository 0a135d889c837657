package procnode

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// restarts says whether a container that exited with code is started
// again under the pod's restart policy.
func restarts(policy corev1.RestartPolicy, code int32) bool {
	switch policy {
	case corev1.RestartPolicyAlways:
		return true
	case corev1.RestartPolicyOnFailure:
		return code != 0
	}
	return false
}

// containerRestarts says whether a regular container that exited with
// code is started again: by the first of its restartPolicyRules whose
// exit codes match (Kubernetes' container restart rules), else by its own
// restartPolicy when it sets one, else by the pod's. A rule's
// RestartAllContainers restarts this container only: process nodes do not
// restart a pod's other containers.
func containerRestarts(pod corev1.RestartPolicy, c *corev1.Container, code int32) bool {
	if c.RestartPolicy == nil {
		return restarts(pod, code)
	}
	for _, r := range c.RestartPolicyRules {
		if r.ExitCodes == nil {
			continue
		}
		in := slices.Contains(r.ExitCodes.Values, code)
		if (r.ExitCodes.Operator == corev1.ContainerRestartRuleOnExitCodesOpIn) == in {
			return r.Action == corev1.ContainerRestartRuleActionRestart || r.Action == corev1.ContainerRestartRuleActionRestartAllContainers
		}
	}
	return restarts(corev1.RestartPolicy(*c.RestartPolicy), code)
}

// maxBackoff is the kubelet's longest restart back-off.
const maxBackoff = 5 * time.Minute

// nextRestart is how long after its failure at finished the container
// starts again, as the kubelet's back-off decides: at once after a first
// failure, or one that comes more than twice the longest back-off after
// the last; else the back-off, which starts at initial and doubles with
// each failure, up to 5 minutes.
func (c *container) nextRestart(finished time.Time, initial time.Duration) time.Duration {
	var delay time.Duration
	if c.backoff == 0 || finished.Sub(c.lastFailure) > 2*maxBackoff {
		c.backoff = initial
	} else {
		delay = c.backoff
		c.backoff = min(2*c.backoff, maxBackoff)
	}
	c.lastFailure = finished
	return delay
}

// terminalPhase is the phase of a pod none of whose containers runs or
// will run again: Succeeded when every one exited 0, else Failed.
func terminalPhase(codes []int32) corev1.PodPhase {
	for _, c := range codes {
		if c != 0 {
			return corev1.PodFailed
		}
	}
	return corev1.PodSucceeded
}

// terminatedReason is the reason container runtimes give an exit code.
func terminatedReason(code int32) string {
	if code == 0 {
		return "Completed"
	}
	return "Error"
}

// setCondition sets a condition of the pod's status, keeping its
// transition time when its status does not change.
func setCondition(s *corev1.PodStatus, c corev1.PodCondition) {
	for i := range s.Conditions {
		if s.Conditions[i].Type != c.Type {
			continue
		}
		if s.Conditions[i].Status == c.Status {
			c.LastTransitionTime = s.Conditions[i].LastTransitionTime
		}
		s.Conditions[i] = c
		return
	}
	s.Conditions = append(s.Conditions, c)
}

func condStatus(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}
