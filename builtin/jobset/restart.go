package jobset

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// Names of the JobSet failurePolicy rules that a restart policy writes. The
// JobSet's RestartingJobSet condition has reason FailurePolicy_<rule name>,
// which is how Status tells why the job restarted. With several groups of
// replicatedJobs (see applyRestartPolicy) the names get a suffix _<group>.
const (
	FailOnExitCodeRule      = "TrainforgeFailOnExitCode"
	RestartOnExitCodeRule   = "TrainforgeRestartOnExitCode"
	RestartOnDisruptionRule = "TrainforgeRestartOnPodDisruption"
)

// maxPodFailurePolicyRules is how many podFailurePolicy rules the Job API
// takes.
const maxPodFailurePolicyRules = 20

var (
	restartPolicyPath = field.NewPath("spec", "restartPolicy")
	templateSpecPath  = field.NewPath("spec", "template", "spec")
)

// validateRestartPolicy checks what the CRD's schema cannot: an exit code
// in two rules that can match the same container, and the codes' range
// (a runtime snapshot is not checked by the schema again).
func validateRestartPolicy(p *trainer.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	for i, r := range p.ExitCodes {
		rulePath := restartPolicyPath.Child("exitCodes").Index(i)
		if r.Action != trainer.FailOnExitCode && r.Action != trainer.RestartOnExitCode {
			errs = append(errs, field.NotSupported(rulePath.Child("action"), r.Action, []string{string(trainer.FailOnExitCode), string(trainer.RestartOnExitCode)}))
		}
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(rulePath.Child("values"), "at least one exit code, from 1 to 255"))
		}
		for j, code := range r.Values {
			if code < 1 || code > 255 {
				errs = append(errs, field.Invalid(rulePath.Child("values").Index(j), code, "an exit code must be from 1 to 255 (0 is success)"))
				continue
			}
			for k := range i {
				if sameContainers(p.ExitCodes[k].ContainerName, r.ContainerName) && slices.Contains(p.ExitCodes[k].Values, code) {
					errs = append(errs, field.Duplicate(rulePath.Child("values").Index(j), code))
					break
				}
			}
		}
	}
	return errs
}

// sameContainers reports whether two rules' containerNames can match the
// same container (unset matches every container).
func sameContainers(a, b *string) bool {
	return a == nil || b == nil || *a == *b
}

// applyRestartPolicy writes the restart policy p into js: failurePolicy's
// maxRestarts, restartStrategy and rules, and the podFailurePolicy of every
// replicatedJob's Job. What the runtime's template already has is kept;
// a template setting that says something else than p is an error naming
// both fields.
//
// The mapping, for a Job whose template has n podFailurePolicy rules:
//
//   - each exit code rule becomes podFailurePolicy rule n+i, action
//     FailJob on those exit codes, so that the Job fails at once (reason
//     PodFailurePolicy, message "... matching FailJob rule at index n+i");
//   - a free pod disruption becomes one more FailJob rule, on the pod
//     condition DisruptionTarget;
//   - JobSet rules, before the template's own, match reason
//     PodFailurePolicy and the message of those indices: FailJobSet for
//     Fail codes, RestartJobSet (counted) for Restart codes,
//     RestartJobSetAndIgnoreMaxRestarts (not counted) for disruptions.
//
// A pod disruption restarts the whole job, not only the lost pod (which an
// Ignore rule would do): a distributed job's other pods cannot go on
// without it. The elastic replicatedJob (elastic, "" for none) is the
// exception: its disruption rule is Ignore, so that its Job replaces the
// lost pod without counting it while torchrun's rendezvous re-forms the
// group of the others; the job restarts only if fewer than minNodes are
// left long enough for the rendezvous to time out and the pods to fail.
func applyRestartPolicy(js *jobsetv1alpha2.JobSet, p *trainer.RestartPolicy, elastic string) field.ErrorList {
	errs := validateRestartPolicy(p)
	if len(errs) > 0 {
		return errs
	}
	fp := js.Spec.FailurePolicy
	if fp == nil {
		fp = &jobsetv1alpha2.FailurePolicy{}
	}
	fpPath := templateSpecPath.Child("failurePolicy")
	if p.MaxRestarts != nil {
		if fp.MaxRestarts != 0 && fp.MaxRestarts != *p.MaxRestarts {
			errs = append(errs, field.Invalid(restartPolicyPath.Child("maxRestarts"), *p.MaxRestarts,
				fmt.Sprintf("conflicts with the runtime's %s (%d); set only one of them", fpPath.Child("maxRestarts"), fp.MaxRestarts)))
		}
		fp.MaxRestarts = *p.MaxRestarts
	}
	if p.RestartStrategy != nil {
		want := jobsetv1alpha2.JobSetRestartStrategy(*p.RestartStrategy)
		if fp.RestartStrategy != "" && fp.RestartStrategy != want {
			errs = append(errs, field.Invalid(restartPolicyPath.Child("restartStrategy"), want,
				fmt.Sprintf("conflicts with the runtime's %s (%s); set only one of them", fpPath.Child("restartStrategy"), fp.RestartStrategy)))
		}
		fp.RestartStrategy = want
	}

	ours := podFailureRules(p)
	// groups maps the number of the template's own podFailurePolicy rules
	// to the replicatedJobs that have that many: our rules' indices, which
	// the JobSet rules match, start there.
	var offsets []int
	groups := map[int][]string{}
	for i := range js.Spec.ReplicatedJobs {
		if len(ours) == 0 {
			// Only a budget or a strategy: the Jobs stay as they are.
			break
		}
		rj := &js.Spec.ReplicatedJobs[i]
		rules := ours
		if rj.Name == elastic && p.RestartsDisruptionsFree() {
			rules = slices.Clone(ours)
			rules[len(rules)-1].Action = batchv1.PodFailurePolicyActionIgnore
		}
		offset, rjErrs := addPodFailureRules(rj, templateSpecPath.Child("replicatedJobs").Index(i), p, rules)
		errs = append(errs, rjErrs...)
		if _, ok := groups[offset]; !ok {
			offsets = append(offsets, offset)
		}
		groups[offset] = append(groups[offset], rj.Name)
	}
	if len(errs) > 0 {
		return errs
	}
	var rules []jobsetv1alpha2.FailurePolicyRule
	for g, offset := range offsets {
		var targets []string
		suffix := ""
		if len(offsets) > 1 {
			targets = groups[offset]
			suffix = "_" + strconv.Itoa(g)
		}
		rules = append(rules, jobSetRules(p, offset, suffix, targets)...)
	}
	fp.Rules = append(rules, fp.Rules...)
	js.Spec.FailurePolicy = fp
	return nil
}

// podFailureRules are the podFailurePolicy rules of p, in the order of its
// exit code rules, then the disruption rule.
func podFailureRules(p *trainer.RestartPolicy) []batchv1.PodFailurePolicyRule {
	var out []batchv1.PodFailurePolicyRule
	for _, r := range p.ExitCodes {
		out = append(out, batchv1.PodFailurePolicyRule{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: r.ContainerName,
				Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
				// The Job API wants them sorted, each once.
				Values: slices.Compact(slices.Sorted(slices.Values(r.Values))),
			},
		})
	}
	if p.RestartsDisruptionsFree() {
		out = append(out, batchv1.PodFailurePolicyRule{
			Action:          batchv1.PodFailurePolicyActionFailJob,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		})
	}
	return out
}

// addPodFailureRules appends ours to the podFailurePolicy of one
// replicatedJob's Job, after the template's own rules, whose number it
// returns. A template rule that decides the same failures as p is an
// error naming both fields, and so are pods restarted in place.
func addPodFailureRules(rj *jobsetv1alpha2.ReplicatedJob, rjPath *field.Path, p *trainer.RestartPolicy, ours []batchv1.PodFailurePolicyRule) (int, field.ErrorList) {
	var errs field.ErrorList
	jobSpec := &rj.Template.Spec
	podSpec := &jobSpec.Template.Spec
	switch podSpec.RestartPolicy {
	case "":
		// JobSet would default it to OnFailure, which a podFailurePolicy
		// does not allow.
		podSpec.RestartPolicy = corev1.RestartPolicyNever
	case corev1.RestartPolicyNever:
	default:
		errs = append(errs, field.Invalid(rjPath.Child("template", "spec", "template", "spec", "restartPolicy"), podSpec.RestartPolicy,
			fmt.Sprintf("%s needs pods that are not restarted in place (restartPolicy Never): a Job's podFailurePolicy, which it writes, requires it", restartPolicyPath)))
	}
	if jobSpec.PodFailurePolicy == nil {
		jobSpec.PodFailurePolicy = &batchv1.PodFailurePolicy{}
	}
	own := jobSpec.PodFailurePolicy.Rules
	rulesPath := rjPath.Child("template", "spec", "podFailurePolicy", "rules")
	for k, t := range own {
		if p.RestartsDisruptionsFree() && slices.ContainsFunc(t.OnPodConditions, func(c batchv1.PodFailurePolicyOnPodConditionsPattern) bool {
			return c.Type == corev1.DisruptionTarget
		}) {
			errs = append(errs, field.Invalid(rulesPath.Index(k).Child("onPodConditions"), string(corev1.DisruptionTarget),
				fmt.Sprintf("conflicts with %s (RestartWithoutCounting, the default), which decides pod disruptions too; remove this rule or set %s to Count",
					restartPolicyPath.Child("onPodDisruption"), restartPolicyPath.Child("onPodDisruption"))))
		}
		if t.OnExitCodes == nil {
			continue
		}
		for i, r := range p.ExitCodes {
			if code, ok := overlap(t.OnExitCodes, r); ok {
				errs = append(errs, field.Invalid(rulesPath.Index(k).Child("onExitCodes"), code,
					fmt.Sprintf("conflicts with %s, which decides exit code %d too; set it in only one of them", restartPolicyPath.Child("exitCodes").Index(i), code)))
				break
			}
		}
	}
	if n := len(own) + len(ours); n > maxPodFailurePolicyRules {
		errs = append(errs, field.Invalid(rulesPath, len(own), fmt.Sprintf("the template's %d rules and the %d that %s adds make %d; a Job's podFailurePolicy takes at most %d",
			len(own), len(ours), restartPolicyPath, n, maxPodFailurePolicyRules)))
	}
	jobSpec.PodFailurePolicy.Rules = append(own, ours...)
	return len(own), errs
}

// overlap returns an exit code that both a template's onExitCodes and one
// of p's rules match.
func overlap(t *batchv1.PodFailurePolicyOnExitCodesRequirement, r trainer.ExitCodeRule) (int32, bool) {
	if !sameContainers(t.ContainerName, r.ContainerName) {
		return 0, false
	}
	for _, code := range r.Values {
		in := slices.Contains(t.Values, code)
		if (t.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) == in {
			return code, true
		}
	}
	return 0, false
}

// jobSetRules are the JobSet failurePolicy rules of p for the Jobs whose
// podFailurePolicy has p's rules from index offset on.
func jobSetRules(p *trainer.RestartPolicy, offset int, suffix string, targets []string) []jobsetv1alpha2.FailurePolicyRule {
	var failAt, restartAt []int
	for i, r := range p.ExitCodes {
		if r.Action == trainer.FailOnExitCode {
			failAt = append(failAt, offset+i)
		} else {
			restartAt = append(restartAt, offset+i)
		}
	}
	rule := func(name string, action jobsetv1alpha2.FailurePolicyAction, indices []int) jobsetv1alpha2.FailurePolicyRule {
		alternatives := make([]string, 0, len(indices))
		for _, i := range indices {
			alternatives = append(alternatives, strconv.Itoa(i))
		}
		return jobsetv1alpha2.FailurePolicyRule{
			Name:                        name + suffix,
			Action:                      action,
			OnJobFailureReasons:         []string{batchv1.JobReasonPodFailurePolicy},
			OnJobFailureMessagePatterns: []string{fmt.Sprintf(`matching FailJob rule at index (%s)$`, strings.Join(alternatives, "|"))},
			TargetReplicatedJobs:        slices.Clone(targets),
		}
	}
	var out []jobsetv1alpha2.FailurePolicyRule
	if len(failAt) > 0 {
		out = append(out, rule(FailOnExitCodeRule, jobsetv1alpha2.FailJobSet, failAt))
	}
	if len(restartAt) > 0 {
		out = append(out, rule(RestartOnExitCodeRule, jobsetv1alpha2.RestartJobSet, restartAt))
	}
	if p.RestartsDisruptionsFree() {
		out = append(out, rule(RestartOnDisruptionRule, jobsetv1alpha2.RestartJobSetAndIgnoreMaxRestarts, []int{offset + len(p.ExitCodes)}))
	}
	return out
}

// ourRule returns which of the restart policy's JobSet rules a rule name
// is, without its group suffix, or "".
func ourRule(name string) string {
	for _, r := range []string{FailOnExitCodeRule, RestartOnExitCodeRule, RestartOnDisruptionRule} {
		if name == r || strings.HasPrefix(name, r+"_") {
			return r
		}
	}
	return ""
}

// restartStatus returns the TrainJob's status.restarts from its JobSet's
// restart counts, given what the TrainJob said before: nil while the JobSet
// never restarted. The reason of a new restart comes from the JobSet's
// RestartingJobSet condition (FailurePolicy_<rule name>) while it is True;
// when the restart is over before the controller saw it, from which count
// grew. A JobSet that restarts in place counts its restarts in place as
// its currentInPlaceRestartAttempt (the attempt every pod's agent is at),
// each one counted towards maxRestarts, as JobSet counts them.
func restartStatus(js *jobsetv1alpha2.JobSet, before *trainer.RestartStatus) *trainer.RestartStatus {
	var inPlace int32
	if fp := js.Spec.FailurePolicy; fp != nil && fp.RestartStrategy == jobsetv1alpha2.InPlaceRestart && js.Status.CurrentInPlaceRestartAttempt != nil {
		inPlace = *js.Status.CurrentInPlaceRestartAttempt
	}
	count := js.Status.Restarts + inPlace
	if count == 0 {
		return nil
	}
	if before != nil && before.Count == count {
		return before.DeepCopy()
	}
	out := &trainer.RestartStatus{Count: count, CountedTowardsMax: js.Status.RestartsCountTowardsMax + inPlace}
	counted := before == nil && out.CountedTowardsMax > 0 || before != nil && out.CountedTowardsMax > before.CountedTowardsMax
	var beforeInPlace int32 // of the restarts counted before, those in place
	if before != nil {
		beforeInPlace = max(0, before.Count-js.Status.Restarts)
	}
	switch {
	case inPlace > beforeInPlace:
		// The restart in place is the one the JobSet's attempt shows;
		// no condition says when: the time it is seen.
		out.LastReason = trainer.RestartInPlaceReason
		return out
	case counted:
		out.LastReason = trainer.RestartJobFailedReason
	case hasRule(js, RestartOnDisruptionRule):
		out.LastReason = trainer.RestartPodDisruptionReason
	default:
		out.LastReason = trainer.RestartUncountedReason
	}
	if c := meta.FindStatusCondition(js.Status.Conditions, string(jobsetv1alpha2.JobSetRestarting)); c != nil && c.Status == metav1.ConditionTrue {
		out.LastReason = restartReason(c.Reason)
		out.LastMessage = c.Message
		out.LastTime = ptr.To(c.LastTransitionTime)
	}
	return out
}

// hasRule reports whether the JobSet's failurePolicy has one of the
// restart policy's rules.
func hasRule(js *jobsetv1alpha2.JobSet, rule string) bool {
	fp := js.Spec.FailurePolicy
	return fp != nil && slices.ContainsFunc(fp.Rules, func(r jobsetv1alpha2.FailurePolicyRule) bool { return ourRule(r.Name) == rule })
}

// restartReason turns a RestartingJobSet condition's reason into a
// TrainJob restart reason.
func restartReason(jobSetReason string) string {
	rule, ok := strings.CutPrefix(jobSetReason, "FailurePolicy_")
	if !ok {
		// DefaultFailurePolicy: no rule matched the failed Job.
		return trainer.RestartJobFailedReason
	}
	switch ourRule(rule) {
	case RestartOnExitCodeRule:
		return trainer.RestartRetryableExitCodeReason
	case RestartOnDisruptionRule:
		return trainer.RestartPodDisruptionReason
	}
	return jobSetReason
}

// failedReason gives the TrainJob's Failed condition the restart policy's
// words for a JobSet that failed: an exit code of a Fail rule is named as
// such (JobSet says only that a FailJobSet rule matched), and a spent
// budget says how large it was.
func failedReason(js *jobsetv1alpha2.JobSet, reason, message string) (string, string) {
	fp := js.Spec.FailurePolicy
	if fp == nil {
		return reason, message
	}
	switch reason {
	case "FailJobSetFailurePolicyAction":
		// Ours is then the only FailJobSet rule that could have matched.
		for _, r := range fp.Rules {
			if r.Action == jobsetv1alpha2.FailJobSet && ourRule(r.Name) != FailOnExitCodeRule {
				return reason, message
			}
		}
		return trainer.TrainJobFailedExitCodeReason,
			"A container exited with an exit code that spec.restartPolicy.exitCodes says fails the job, so it was not restarted: " + message
	case trainer.TrainJobReachedMaxRestartsReason:
		return reason, fmt.Sprintf("The job failed again after %d restarts that count (maxRestarts %d): %s",
			js.Status.RestartsCountTowardsMax, fp.MaxRestarts, message)
	}
	return reason, message
}
