package sdktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

func newChecker(ctx context.Context, rpc pluginv1.PluginServiceClient) *checker {
	return &checker{ctx: ctx, rpc: rpc, skipped: map[Property]string{}, checked: map[resultKey]bool{}}
}

// checker checks the properties of one plugin. It runs each property on
// each case once and records what it found.
type checker struct {
	ctx    context.Context
	rpc    pluginv1.PluginServiceClient
	client *remote.Client
	// desc and impl are what the plugin described itself as: its
	// description, and the client's methods for the points it lists.
	desc framework.Description
	impl framework.Implementation
	// described is the first Describe answer.
	described *pluginv1.DescribeResponse
	errs      []error
	// skipped says why a property was not checked.
	skipped map[Property]string
	// checked holds the properties checked, per case ("" for the plugin as
	// a whole).
	checked map[resultKey]bool
}

type resultKey struct {
	prop     Property
	caseName string
}

// ran records that properties were checked on a case ("" for the plugin
// as a whole).
func (c *checker) ran(caseName string, props ...Property) {
	for _, p := range props {
		c.checked[resultKey{p, caseName}] = true
	}
}

// ranAny reports whether a property was checked on any case.
func (c *checker) ranAny(p Property) bool {
	for k := range c.checked {
		if k.prop == p {
			return true
		}
	}
	return false
}

// results lists the outcome of each property on each case, in the order
// of AllProperties and of the cases; the plugin as a whole comes first.
func (c *checker) results(cases []Case) []Result {
	names := []string{""}
	for _, tc := range cases {
		if !slices.Contains(names, tc.Name) {
			names = append(names, tc.Name)
		}
	}
	var out []Result
	for _, prop := range AllProperties {
		n := len(out)
		for _, name := range names {
			var errs []error
			for _, err := range c.errs {
				if pe := err.(*PropertyError); pe.Property == prop && pe.Case == name {
					errs = append(errs, err)
				}
			}
			if len(errs) > 0 || c.checked[resultKey{prop, name}] {
				out = append(out, Result{Property: prop, Case: name, Errors: errs})
			}
		}
		if len(out) == n {
			reason := c.skipped[prop]
			if reason == "" {
				reason = "not checked"
			}
			out = append(out, Result{Property: prop, Skipped: reason})
		}
	}
	return out
}

// skip records why properties were not checked.
func (c *checker) skip(reason string, props ...Property) {
	for _, p := range props {
		if _, ok := c.skipped[p]; !ok {
			c.skipped[p] = reason
		}
	}
}

func (c *checker) fail(prop Property, caseName, format string, args ...any) {
	c.errs = append(c.errs, &PropertyError{Property: prop, Case: caseName, Problem: fmt.Sprintf(format, args...)})
}

// failDiff reports a problem shown by a diff.
func (c *checker) failDiff(prop Property, caseName, problem, diff string) {
	c.errs = append(c.errs, &PropertyError{Property: prop, Case: caseName, Problem: problem, Detail: diff})
}

func (c *checker) run(cases []Case) {
	if !c.describe() {
		c.skip("Describe failed", PropConfigure, PropWatch, PropCases, PropEnforceApplies, PropEnforceDeterministic,
			PropEnforceIdempotent, PropBuildObjects, PropBuildDeterministic, PropValidate, PropStatus)
		return
	}
	if !c.enforces() {
		c.skip("the plugin implements no Enforce point", PropEnforceApplies, PropEnforceDeterministic, PropEnforceIdempotent)
	}
	if !c.impl.Implements(framework.PointBuild) {
		c.skip("the plugin does not implement Build", PropBuildObjects, PropBuildDeterministic)
	}
	if !c.impl.Implements(framework.PointWatch) {
		c.skip("the plugin does not implement Watch", PropWatch)
	}
	if !c.impl.Implements(framework.PointValidate) {
		c.skip("the plugin does not implement Validate", PropValidate)
	}
	if !c.impl.Implements(framework.PointStatus) {
		c.skip("the plugin does not implement Status", PropStatus)
	}
	c.watch()
	if len(cases) == 0 {
		c.configure("", nil)
		if c.enforces() || c.impl.Implements(framework.PointBuild) || c.impl.Implements(framework.PointValidate) {
			c.fail(PropCases, "", "no cases: give Check at least one case, or Validate, Enforce and Build go unchecked")
		}
		c.skip("no cases", PropEnforceApplies, PropEnforceDeterministic, PropEnforceIdempotent, PropBuildObjects, PropBuildDeterministic,
			PropValidate, PropStatus)
		return
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if tc.Name == "" {
			c.fail(PropCases, "", "a case has no name; name every case")
			continue
		}
		if seen[tc.Name] {
			c.fail(PropCases, tc.Name, "two cases have this name; name every case differently")
			continue
		}
		seen[tc.Name] = true
		c.runCase(tc)
	}
	c.skip("no case got this far: see the failures of the properties before",
		slices.DeleteFunc([]Property{PropEnforceApplies, PropEnforceDeterministic, PropEnforceIdempotent, PropBuildObjects, PropBuildDeterministic,
			PropValidate, PropStatus},
			func(p Property) bool { return c.ranAny(p) })...)
}

// enforces reports whether the plugin implements an Enforce point.
func (c *checker) enforces() bool {
	return c.impl.Implements(framework.PointEnforceMLPolicy) || c.impl.Implements(framework.PointEnforcePodGroupPolicy)
}

// probes are calls to each point but Configure with an empty request. A
// point the plugin implements answers something else than UNIMPLEMENTED
// (usually INVALID_ARGUMENT, for the empty input).
var probes = []struct {
	point framework.ExtensionPoint
	call  func(context.Context, pluginv1.PluginServiceClient) error
}{
	{framework.PointValidate, func(ctx context.Context, r pluginv1.PluginServiceClient) error {
		_, err := r.Validate(ctx, &pluginv1.ValidateRequest{})
		return err
	}},
	{framework.PointEnforceMLPolicy, func(ctx context.Context, r pluginv1.PluginServiceClient) error {
		_, err := r.EnforceMLPolicy(ctx, &pluginv1.EnforceMLPolicyRequest{})
		return err
	}},
	{framework.PointEnforcePodGroupPolicy, func(ctx context.Context, r pluginv1.PluginServiceClient) error {
		_, err := r.EnforcePodGroupPolicy(ctx, &pluginv1.EnforcePodGroupPolicyRequest{})
		return err
	}},
	{framework.PointBuild, func(ctx context.Context, r pluginv1.PluginServiceClient) error {
		_, err := r.Build(ctx, &pluginv1.BuildRequest{})
		return err
	}},
	{framework.PointWatch, func(ctx context.Context, r pluginv1.PluginServiceClient) error {
		_, err := r.Watch(ctx, &pluginv1.WatchRequest{})
		return err
	}},
	{framework.PointStatus, func(ctx context.Context, r pluginv1.PluginServiceClient) error {
		_, err := r.Status(ctx, &pluginv1.StatusRequest{})
		return err
	}},
}

// describe checks the Describe properties and dials the client; it reports
// whether the other checks can go on.
func (c *checker) describe() bool {
	c.ran("", PropDescribe)
	resp, err := c.rpc.Describe(c.ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		c.fail(PropDescribe, "", "Describe failed: %v", err)
		return false
	}
	c.described = resp
	var points []framework.ExtensionPoint
	c.client = remote.NewClient(c.rpc, remote.Limits{})
	if c.desc, points, err = c.client.Describe(c.ctx); err != nil {
		c.fail(PropDescribe, "", "the host refuses the description: %v", err)
		return false
	}
	c.impl = c.client.Implementation(points)
	d := c.desc
	if d.Name == "" {
		c.fail(PropDescribe, "", "the description has no name; set Description.Name to the plugin's name in the configuration file")
	}

	for _, probe := range probes {
		listed := c.impl.Implements(probe.point)
		code := status.Code(probe.call(c.ctx, c.rpc))
		switch {
		case listed && code == codes.Unimplemented:
			c.fail(PropDescribe, "", "Describe lists %s, but calls to it answer UNIMPLEMENTED", probe.point)
		case !listed && code != codes.Unimplemented:
			c.fail(PropDescribe, "", "Describe does not list %s, but calls to it answer (%s): the host never calls it", probe.point, code)
		}
	}
	builds := c.impl.Implements(framework.PointBuild)
	switch {
	case builds && len(d.Builds) == 0:
		c.fail(PropDescribe, "", "the plugin implements Build but declares no kind in Description.Builds: the host refuses every object it builds; list the kinds it builds")
	case !builds && len(d.Builds) > 0:
		c.fail(PropDescribe, "", "Description.Builds lists %s but the plugin does not implement Build (framework.Builder)", kindsString(d.Builds))
	}
	if c.impl.Implements(framework.PointStatus) && len(d.Builds) == 0 {
		c.fail(PropDescribe, "", "the plugin implements Status but builds nothing: Status receives the TrainJob's objects of the kinds in Description.Builds, so it would always receive none")
	}
	return true
}

// configure sends the case's args and checks that Describe did not change.
// It reports whether the plugin accepted the args.
func (c *checker) configure(caseName string, args json.RawMessage) bool {
	c.ran(caseName, PropConfigure)
	if err := configure(c.ctx, c.client, args); err != nil {
		shown := string(args)
		if len(args) == 0 {
			shown = "no args"
		}
		c.fail(PropConfigure, caseName, "Configure(%s) failed: %v", shown, err)
		return false
	}
	resp, err := c.rpc.Describe(c.ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		c.fail(PropDescribe, caseName, "Describe failed after Configure: %v", err)
	} else if !proto.Equal(resp, c.described) {
		c.fail(PropDescribe, caseName, "Describe answers differently after Configure: it must not depend on Configure, since the host calls it first, on every start of the plugin")
	}
	return true
}

// configure sends args as the host does, and accepts what the host
// accepts: a plugin that takes no args need not implement Configure.
func configure(ctx context.Context, client *remote.Client, args json.RawMessage) error {
	err := client.Configure(ctx, args)
	var ce *remote.CallError
	if errors.As(err, &ce) && ce.Code == codes.Unimplemented && !hasArgs(args) {
		return nil
	}
	return err
}

func hasArgs(args json.RawMessage) bool {
	s := strings.TrimSpace(string(args))
	return s != "" && s != "null"
}

func (c *checker) watch() {
	if !c.impl.Implements(framework.PointWatch) {
		return
	}
	c.ran("", PropWatch)
	sources, err := c.client.Watch(c.ctx)
	if err != nil {
		c.fail(PropWatch, "", "Watch failed: %v", err)
		return
	}
	for i, s := range sources {
		if s.Kind.Version == "" || s.Kind.Kind == "" {
			c.fail(PropWatch, "", "source %d: the kind %q needs a version and a kind", i, kindString(s.Kind))
		}
		if s.Mapping != framework.MapByOwner && (s.Mapping != framework.MapByLabel || s.Label == "") {
			c.fail(PropWatch, "", "source %d (%s): the mapping must be %q, or %q with a label", i, kindString(s.Kind), framework.MapByOwner, framework.MapByLabel)
		}
	}
}

func (c *checker) runCase(tc Case) {
	c.ran(tc.Name, PropCases)
	if tc.Runtime == nil || tc.Job == nil {
		c.fail(PropCases, tc.Name, "the case needs a Runtime and a Job")
		return
	}
	if !c.configure(tc.Name, tc.Args) {
		return
	}
	input, err := framework.NewInfo(tc.Job, tc.Runtime)
	if err != nil {
		c.fail(PropCases, tc.Name, "the runtime and the TrainJob do not make an Info: %v", err)
		return
	}
	keys, err := input.PolicyKeys()
	if err != nil {
		c.fail(PropCases, tc.Name, "reading the runtime's policies: %v", err)
		return
	}
	if !c.desc.TakesPart(keys) {
		c.fail(PropCases, tc.Name, "the plugin owns policy keys (mlPolicy %q, podGroupPolicy %q) and the runtime sets none of them, so the host would not call it for this job; give a runtime that sets one",
			c.desc.MLPolicyKeys, c.desc.PodGroupPolicyKeys)
		return
	}

	if c.impl.Implements(framework.PointValidate) {
		c.validateProperties(tc, input)
	}
	enforced, ok := c.enforceProperties(tc, input)
	if !ok {
		return
	}
	var built []*unstructured.Unstructured
	if c.impl.Implements(framework.PointBuild) {
		if built, ok = c.buildProperties(tc, enforced); !ok {
			return
		}
	}
	if c.impl.Implements(framework.PointStatus) {
		c.statusProperties(tc, enforced, built)
	}
}

// validateProperties checks Validate on a case, as admission calls it for
// a TrainJob being created.
func (c *checker) validateProperties(tc Case, input *framework.Info) {
	c.ran(tc.Name, PropValidate)
	answer := func(first bool) (string, bool) {
		warnings, errs, err := c.client.Validate(c.ctx, framework.ValidateRequest{Kind: framework.ValidateTrainJob, Info: mustCopy(input), NewJob: tc.Job})
		if err != nil {
			c.fail(PropValidate, tc.Name, "Validate failed as a call: %v; report what is wrong with the TrainJob as field errors", err)
			return "", false
		}
		for i, fe := range errs {
			if first && fe.Field == "" {
				c.fail(PropValidate, tc.Name, "field error %d (%s) names no field; give the path of the field at fault, for example spec.trainer.env[0].name", i, fe.Detail)
			}
		}
		return yamlText(map[string]any{"warnings": warnings, "errors": errs.ToAggregate()}), true
	}
	first, ok := answer(true)
	if !ok {
		return
	}
	if second, ok := answer(false); ok && first != second {
		c.failDiff(PropValidate, tc.Name, "two Validate on the same TrainJob gave different answers (-first +second)", cmp.Diff(first, second))
	}
}

// conditionReason is the pattern the API server requires of a condition's
// reason (metav1.Condition).
var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// statusProperties checks Status on a case: before the objects exist, and
// with the objects the plugin built as they are right after their creation,
// given the Info they were built from (info) and without one, as a host
// that has none calls it.
func (c *checker) statusProperties(tc Case, info *framework.Info, built []*unstructured.Unstructured) {
	c.ran(tc.Name, PropStatus)
	for _, owned := range []struct {
		what string
		info *framework.Info
		objs []*unstructured.Unstructured
	}{
		{"with no owned objects", info, nil},
		{"with the objects it built", info, inNamespace(built, tc.Job.Namespace)},
		{"with the objects it built and no Info (a host that has none)", nil, inNamespace(built, tc.Job.Namespace)},
	} {
		first, err := c.client.Status(c.ctx, copyOrNil(owned.info), tc.Job, owned.objs)
		if err != nil {
			c.fail(PropStatus, tc.Name, "Status %s failed: %v; return nil while there is nothing to report", owned.what, err)
			continue
		}
		second, err := c.client.Status(c.ctx, copyOrNil(owned.info), tc.Job, owned.objs)
		if err != nil {
			c.fail(PropStatus, tc.Name, "the first Status %s succeeded, the second failed: %v", owned.what, err)
		} else if diff := diffYAML(first, second); diff != "" {
			c.failDiff(PropStatus, tc.Name, "two Status "+owned.what+" gave different answers (-first +second)", diff)
		}
		if first == nil {
			continue
		}
		for i, cond := range first.Conditions {
			switch {
			case cond.Type == "":
				c.fail(PropStatus, tc.Name, "%s, condition %d has no type", owned.what, i)
			case cond.Status != metav1.ConditionTrue && cond.Status != metav1.ConditionFalse && cond.Status != metav1.ConditionUnknown:
				c.fail(PropStatus, tc.Name, "%s, condition %s has status %q; use True, False or Unknown", owned.what, cond.Type, cond.Status)
			case len(cond.Reason) > 1024 || !conditionReason.MatchString(cond.Reason):
				c.fail(PropStatus, tc.Name, "%s, condition %s has reason %q, which the API server refuses; use a CamelCase word such as JobsRunning", owned.what, cond.Type, cond.Reason)
			}
		}
	}
}

// inNamespace returns copies of objs in namespace, as the host creates them.
func inNamespace(objs []*unstructured.Unstructured, namespace string) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopy()
		if o.GetNamespace() == "" {
			o.SetNamespace(namespace)
		}
		out = append(out, o)
	}
	return out
}

// enforceProperties checks the Enforce properties of a case and returns
// Info as the Enforce phase leaves it, and whether it succeeded.
func (c *checker) enforceProperties(tc Case, input *framework.Info) (*framework.Info, bool) {
	first := mustCopy(input)
	if c.enforces() {
		c.ran(tc.Name, PropEnforceApplies)
	}
	if err := enforce(c.ctx, c.impl, first, tc.Job); err != nil {
		c.fail(PropEnforceApplies, tc.Name, "%v", err)
		return nil, false
	}
	if !c.enforces() {
		return first, true
	}
	c.ran(tc.Name, PropEnforceDeterministic, PropEnforceIdempotent)
	second := mustCopy(input)
	if err := enforce(c.ctx, c.impl, second, tc.Job); err != nil {
		c.fail(PropEnforceDeterministic, tc.Name, "the first Enforce succeeded, the second on the same input failed: %v", err)
	} else if diff := diffYAML(first, second); diff != "" {
		c.failDiff(PropEnforceDeterministic, tc.Name, "two Enforce on the same input gave different Info (-first +second)", diff)
	}
	again := mustCopy(first)
	if err := enforce(c.ctx, c.impl, again, tc.Job); err != nil {
		c.fail(PropEnforceIdempotent, tc.Name, "enforcing the resulting Info again failed: %v", err)
	} else if diff := diffYAML(first, again); diff != "" {
		c.failDiff(PropEnforceIdempotent, tc.Name, "enforcing the resulting Info again changed it (-once +twice)", diff)
	}
	return first, true
}

// buildProperties checks Build on a case and returns the objects, and
// whether Build succeeded.
func (c *checker) buildProperties(tc Case, info *framework.Info) ([]*unstructured.Unstructured, bool) {
	c.ran(tc.Name, PropBuildObjects)
	objs, err := c.client.Build(c.ctx, mustCopy(info), tc.Job)
	if err != nil {
		c.fail(PropBuildObjects, tc.Name, "Build failed: %v", err)
		return nil, false
	}
	for i, o := range objs {
		if o.Unstructured == nil {
			c.fail(PropBuildObjects, tc.Name, "object %d is nil", i)
			return nil, false
		}
	}
	type key struct {
		gvk  schema.GroupVersionKind
		name string
	}
	seen := map[key]bool{}
	for i, o := range objs {
		gvk := o.GroupVersionKind()
		what := fmt.Sprintf("object %d (%s %q)", i, gvk.Kind, o.GetName())
		if o.GetAPIVersion() == "" {
			c.fail(PropBuildObjects, tc.Name, "%s has no apiVersion", what)
		}
		if o.GetKind() == "" {
			c.fail(PropBuildObjects, tc.Name, "%s has no kind", what)
		}
		if !slices.Contains(c.desc.Builds, gvk) {
			c.fail(PropBuildObjects, tc.Name, "%s is of kind %s, which the plugin does not declare in Description.Builds %s", what, kindString(gvk), kindsString(c.desc.Builds))
		}
		if name := o.GetName(); name == "" {
			c.fail(PropBuildObjects, tc.Name, "%s has no metadata.name", what)
		} else if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			c.fail(PropBuildObjects, tc.Name, "%s: metadata.name is not a valid DNS-1123 subdomain: %s", what, strings.Join(msgs, "; "))
		}
		if ns := o.GetNamespace(); ns != "" && ns != tc.Job.Namespace {
			c.fail(PropBuildObjects, tc.Name, "%s is in namespace %q; leave the namespace empty or set the TrainJob's (%q)", what, ns, tc.Job.Namespace)
		}
		k := key{gvk, o.GetName()}
		if seen[k] {
			c.fail(PropBuildObjects, tc.Name, "%s: two objects have this kind and name; the second would overwrite the first", what)
		}
		seen[k] = true
	}
	c.ran(tc.Name, PropBuildDeterministic)
	again, err := c.client.Build(c.ctx, mustCopy(info), tc.Job)
	if err != nil {
		c.fail(PropBuildDeterministic, tc.Name, "the first Build succeeded, the second on the same input failed: %v", err)
		return framework.UnstructuredOf(objs), true
	}
	if diff := diffYAML(comparable(objs), comparable(again)); diff != "" {
		c.failDiff(PropBuildDeterministic, tc.Name, "two Build on the same input gave different objects (-first +second)", diff)
	}
	return framework.UnstructuredOf(objs), true
}

// comparable returns objs with the content of objects created once
// (framework.CreateOnce) left out: the host creates only the first one, so
// it may differ on every Build (a new random key). Their kind, name and
// metadata must still be the same every time.
func comparable(objs []framework.Object) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, built := range objs {
		o := built.Unstructured
		if o != nil && built.CreateOnce {
			o = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": o.GetAPIVersion(), "kind": o.GetKind(), "metadata": o.Object["metadata"],
			}}
		}
		out = append(out, o)
	}
	return out
}

// enforce runs the plugin's Enforce points on info as the host's runner
// does for one plugin: EnforceMLPolicy, then the derived values (endpoints,
// per-pod requests) again, then EnforcePodGroupPolicy.
func enforce(ctx context.Context, impl framework.Implementation, info *framework.Info, job *trainer.TrainJob) error {
	if e := impl.MLPolicyEnforcer; e != nil {
		if err := e.EnforceMLPolicy(ctx, info, job); err != nil {
			return fmt.Errorf("EnforceMLPolicy failed: %w", err)
		}
	}
	if err := framework.RefreshDerived(info, job.Name); err != nil {
		return fmt.Errorf("after EnforceMLPolicy, the derived values of Info cannot be computed: %w", err)
	}
	if e := impl.PodGroupPolicyEnforcer; e != nil {
		if err := e.EnforcePodGroupPolicy(ctx, info, job); err != nil {
			return fmt.Errorf("EnforcePodGroupPolicy failed: %w", err)
		}
	}
	return nil
}

// mustCopy deep-copies Info; Info is plain JSON data, so it cannot fail.
// copyOrNil is mustCopy, and nil for nil.
func copyOrNil(info *framework.Info) *framework.Info {
	if info == nil {
		return nil
	}
	return mustCopy(info)
}

func mustCopy(info *framework.Info) *framework.Info {
	out, err := info.Copy()
	if err != nil {
		panic(fmt.Sprintf("sdktest: copying Info: %v", err))
	}
	return out
}

// diffYAML compares two values through their YAML form, which holds what
// the host sees (their JSON), and returns a line diff or "".
func diffYAML(a, b any) string {
	return cmp.Diff(yamlText(a), yamlText(b))
}

func yamlText(v any) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<cannot encode: %v>", err)
	}
	return string(data)
}

// kindString names a kind as apiVersion/kind: "v1/ConfigMap",
// "jobset.x-k8s.io/v1alpha2/JobSet".
func kindString(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + "/" + gvk.Kind
}

func kindsString(gvks []schema.GroupVersionKind) string {
	out := make([]string, 0, len(gvks))
	for _, g := range gvks {
		out = append(out, kindString(g))
	}
	return "[" + strings.Join(out, ", ") + "]"
}
