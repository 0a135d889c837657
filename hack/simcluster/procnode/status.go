package procnode

import corev1 "k8s.io/api/core/v1"

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
