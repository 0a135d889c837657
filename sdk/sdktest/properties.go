package sdktest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// Property names one generic property of a plugin that Check verifies.
// Check runs one subtest per property, named after it.
type Property string

// The properties, in the order Check reports them.
const (
	// Describe: the plugin has a name; the points it lists are exactly the
	// ones that answer; it lists Build if and only if it declares kinds in
	// Builds; Status comes with Builds; the description does not change
	// with Configure.
	PropDescribe Property = "Describe"
	// Configure: the plugin accepts each case's args.
	PropConfigure Property = "Configure"
	// Watch: the sources a Watcher gives have a kind and a valid mapping.
	PropWatch Property = "Watch"
	// Cases: the cases are usable: named, with a runtime and a TrainJob
	// that make an Info, and the plugin takes part in them.
	PropCases Property = "Cases"
	// EnforceApplies: the Enforce points succeed on each case and their
	// patch applies to Info (the host refuses a patch outside Info).
	PropEnforceApplies Property = "Enforce/applies"
	// EnforceDeterministic: enforcing the same input twice gives the same
	// Info.
	PropEnforceDeterministic Property = "Enforce/deterministic"
	// EnforceIdempotent: enforcing the resulting Info again changes nothing.
	PropEnforceIdempotent Property = "Enforce/idempotent"
	// BuildObjects: Build succeeds, and each object has an apiVersion, a
	// kind the plugin declares in Builds, a valid name (a DNS-1123
	// subdomain), no namespace or the TrainJob's, and no two objects have
	// the same kind and name.
	PropBuildObjects Property = "Build/objects"
	// BuildDeterministic: building the same input twice gives the same
	// objects.
	PropBuildDeterministic Property = "Build/deterministic"
	// Validate: Validate answers each case without failing as a call, every
	// field error names a field, and the same input gives the same answer.
	PropValidate Property = "Validate"
	// Status: Status answers without failing both before the objects exist
	// (no owned objects) and with the objects the plugin built, the same
	// input gives the same status, and each condition is one the API server
	// accepts (a type, a status True, False or Unknown, a CamelCase reason).
	PropStatus Property = "Status"
)

// AllProperties lists every property, in the order Check reports them.
var AllProperties = []Property{
	PropDescribe, PropConfigure, PropWatch, PropCases,
	PropEnforceApplies, PropEnforceDeterministic, PropEnforceIdempotent,
	PropBuildObjects, PropBuildDeterministic, PropValidate, PropStatus,
}

// why says, for each property, why a plugin must have it.
var why = map[Property]string{
	PropDescribe:             "the host decides from Describe which jobs the plugin takes part in and which methods it calls",
	PropConfigure:            "args the plugin rejects stop the controller's start-up",
	PropWatch:                "the controller watches these kinds for the plugin",
	PropCases:                "a case the plugin takes no part in checks nothing",
	PropEnforceApplies:       "the host applies the patch of the plugin's changes to Info, and refuses one that touches anything else",
	PropEnforceDeterministic: "the host enforces on every reconcile and must get the same Info from the same input",
	PropEnforceIdempotent:    "the host enforces on every reconcile; a second pass must change nothing",
	PropBuildObjects:         "the host refuses objects of undeclared kinds, in another namespace, or that the API server would reject",
	PropBuildDeterministic:   "the host applies the objects on every reconcile; objects that change each time never settle",
	PropValidate:             "admission calls Validate for every TrainJob; a failed call rejects it with the plugin's error, and an answer that changes each time cannot be relied on",
	PropStatus:               "the host asks for the status on every reconcile, also before the objects exist, and writes the conditions to the TrainJob",
}

// PropertyError is a property a plugin does not have, for one case or for
// the plugin as a whole.
type PropertyError struct {
	Property Property
	// Case is the name of the case, or empty for a property of the plugin
	// as a whole.
	Case string
	// Problem says what is wrong.
	Problem string
	// Detail, when set, shows it: a diff, for example.
	Detail string
}

func (e *PropertyError) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Property))
	if e.Case != "" {
		fmt.Fprintf(&b, ", case %q", e.Case)
	}
	fmt.Fprintf(&b, ": %s", e.Problem)
	if w := why[e.Property]; w != "" {
		fmt.Fprintf(&b, " (%s)", w)
	}
	if e.Detail != "" {
		b.WriteString(":\n")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Result is the outcome of one property on one case, or on the plugin as
// a whole.
type Result struct {
	Property Property
	// Case is the case's name, or empty for a property of the plugin as a
	// whole (Describe, Watch) or one that no case reached.
	Case string
	// Errors are the *PropertyError of a property the plugin lacks; none
	// when it has it.
	Errors []error
	// Skipped, when set, says why the property was not checked at all
	// (the plugin does not implement its point, or no case got that far).
	Skipped string
}

// Passed reports whether the property was checked and holds.
func (r Result) Passed() bool { return r.Skipped == "" && len(r.Errors) == 0 }

// String is one line: PASS, FAIL or SKIP, the property, the case, and why.
// A failure's diff follows on the next lines.
func (r Result) String() string {
	what := string(r.Property)
	if r.Case != "" {
		what += fmt.Sprintf(" (case %s)", r.Case)
	}
	switch {
	case r.Skipped != "":
		return fmt.Sprintf("SKIP %s: %s", what, r.Skipped)
	case len(r.Errors) == 0:
		return "PASS " + what
	}
	var b strings.Builder
	for i, err := range r.Errors {
		if i > 0 {
			b.WriteString("\n")
		}
		msg := err.Error()
		var pe *PropertyError
		if errors.As(err, &pe) {
			// The line names the property and the case already.
			msg = (&PropertyError{Property: pe.Property, Problem: pe.Problem, Detail: pe.Detail}).Error()
			msg = strings.TrimPrefix(msg, string(pe.Property)+": ")
		}
		fmt.Fprintf(&b, "FAIL %s: %s", what, msg)
	}
	return b.String()
}

// Run checks, through rpc, the generic properties of a plugin (see
// Property) on the given cases and returns one Result per property and
// case, in the order of AllProperties and of the cases. rpc reaches the
// plugin however it runs: in this process, or in a process of its own
// started by the host, which is how trainforge-plugin-conformance checks a
// plugin binary written in any language. Run needs no testing.T and no Go
// value of the plugin: it checks what the plugin answers.
func Run(ctx context.Context, rpc pluginv1.PluginServiceClient, cases ...Case) []Result {
	c := newChecker(ctx, rpc)
	c.run(cases)
	return c.results(cases)
}

// Check verifies, through the real gRPC path, the generic properties every
// plugin must have (see Property), with the given cases as inputs. Each
// property is a subtest of t; a missing property fails it with t.Errorf,
// naming the property and the case.
//
//	func TestProperties(t *testing.T) {
//		sdktest.Check(t, myplugin.New(),
//			sdktest.CaseFromFiles(t, "two-nodes", "testdata/runtime.yaml", "testdata/two-nodes.yaml"))
//	}
//
// Give cases whose runtime the plugin takes part in (it owns one of the
// runtime's policy keys, or owns none): Check runs the plugin as the host
// would, alone, and reports a case it would not be called for.
func Check(t *testing.T, p framework.Plugin, cases ...Case) {
	t.Helper()
	c := newChecker(context.Background(), connectRPC(t, p))
	c.run(cases)
	byProperty := map[Property][]error{}
	for _, err := range c.errs {
		prop := err.(*PropertyError).Property
		byProperty[prop] = append(byProperty[prop], err)
	}
	// One subtest per property; "Enforce/applies" is the subtest "applies"
	// of the subtest "Enforce".
	var groups []string
	subs := map[string][]Property{}
	for _, prop := range AllProperties {
		group, _, _ := strings.Cut(string(prop), "/")
		if _, ok := subs[group]; !ok {
			groups = append(groups, group)
		}
		subs[group] = append(subs[group], prop)
	}
	report := func(t *testing.T, prop Property) {
		t.Helper()
		for _, err := range byProperty[prop] {
			t.Error(err)
		}
		if reason, ok := c.skipped[prop]; ok && !t.Failed() {
			t.Skip(reason)
		}
	}
	for _, group := range groups {
		t.Run(group, func(t *testing.T) {
			for _, prop := range subs[group] {
				_, sub, nested := strings.Cut(string(prop), "/")
				if !nested {
					report(t, prop)
					continue
				}
				t.Run(sub, func(t *testing.T) { report(t, prop) })
			}
		})
	}
}

// Properties verifies what Check verifies and returns the properties the
// plugin lacks, each a *PropertyError, without failing the test: t serves
// only to connect to the plugin (it fails only when the in-process
// connection cannot be made) and to close the connection at the end. Check
// reports what it returns; use it to assert that a plugin lacks a property.
func Properties(t testing.TB, p framework.Plugin, cases ...Case) []error {
	t.Helper()
	c := newChecker(context.Background(), connectRPC(t, p))
	c.run(cases)
	return c.errs
}
