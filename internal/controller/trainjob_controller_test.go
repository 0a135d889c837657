package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

var jobSetGVK = jobsetv1alpha2.SchemeGroupVersion.WithKind("JobSet")

// fakeBuilder builds one JobSet that carries its image and follows the
// TrainJob's suspension, or fails.
type fakeBuilder struct {
	fail  bool
	image string
}

func (*fakeBuilder) Describe() framework.Description {
	return framework.Description{Name: "FakeBuilder", MLPolicyKeys: []string{framework.NoPolicyKey}, Builds: []schema.GroupVersionKind{jobSetGVK}}
}

func (b *fakeBuilder) Build(_ context.Context, _ *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	if b.fail {
		return nil, errBoom
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(jobSetGVK)
	u.SetName(job.Name)
	_ = unstructured.SetNestedField(u.Object, job.IsSuspended(), "spec", "suspend")
	_ = unstructured.SetNestedField(u.Object, b.image, "metadata", "annotations", "image")
	return framework.Apply(u), nil
}

type boom struct{}

func (boom) Error() string { return "the disk is full" }

var errBoom = boom{}

type fixture struct {
	client   client.Client
	recorder *events.FakeRecorder
	clock    *clocktesting.FakePassiveClock
	r        *TrainJobReconciler
}

func newFixture(t *testing.T, builder *fakeBuilder, objs ...client.Object) *fixture {
	t.Helper()
	return newFixtureOf(t, builder, objs...)
}

// newFixtureOf is newFixture with any one plugin.
func newFixtureOf(t *testing.T, plugin framework.Plugin, objs ...client.Object) *fixture {
	t.Helper()
	return newFixtureWith(t, []framework.Plugin{plugin}, objs...)
}

// newFixtureWith is newFixture with plugins, in that order.
func newFixtureWith(t *testing.T, plugins []framework.Plugin, objs ...client.Object) *fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, trainer.AddToScheme, jobsetv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&trainer.TrainJob{}).Build()
	registry := framework.Registry{}
	var specs []frameworkruntime.PluginSpec
	for _, p := range plugins {
		name := p.Describe().Name
		registry[name] = func(framework.Handle) framework.Plugin { return p }
		specs = append(specs, frameworkruntime.PluginSpec{Name: name})
	}
	fw, err := frameworkruntime.New(context.Background(), registry, specs)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{client: c, recorder: events.NewFakeRecorder(20), clock: clocktesting.NewFakePassiveClock(time.Now().Truncate(time.Second))}
	f.r = &TrainJobReconciler{Client: c, Framework: fw, Recorder: f.recorder, Clock: f.clock}
	return f
}

func (f *fixture) reconcile(t *testing.T, name string) error {
	t.Helper()
	_, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: name}})
	return err
}

func (f *fixture) job(t *testing.T, name string) *trainer.TrainJob {
	t.Helper()
	job := &trainer.TrainJob{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, job); err != nil {
		t.Fatal(err)
	}
	return job
}

// relabel changes a label of the TrainJob, which its plugins see: its next
// reconcile runs them again.
func (f *fixture) relabel(t *testing.T, name, value string) {
	t.Helper()
	job := f.job(t, name)
	if job.Labels == nil {
		job.Labels = map[string]string{}
	}
	job.Labels["example.com/version"] = value
	if err := f.client.Update(context.Background(), job); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func runtimeOf(name string, mlPolicy *trainer.MLPolicy) *trainer.ClusterTrainingRuntime {
	rt := &trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: name}}
	rt.Spec.MLPolicy = mlPolicy
	rt.Spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{{Name: "node", Replicas: 1}}
	rt.Spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers = nil
	return rt
}

func trainJobOf(name, runtime string) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.Now()},
		Spec:       trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: runtime}},
	}
}

func TestUnownedPolicyKeyIsShownOnTheTrainJob(t *testing.T) {
	rt := runtimeOf("deepspeed", &trainer.MLPolicy{Extra: map[string]apiextensionsv1.JSON{"deepspeed": {Raw: []byte(`{"stage":3}`)}}})
	f := newFixture(t, &fakeBuilder{}, rt, trainJobOf("job", "deepspeed"))

	err := f.reconcile(t, "job")
	if err == nil || !strings.Contains(err.Error(), "mlPolicy.deepspeed") {
		t.Fatalf("reconcile error = %v, want one naming mlPolicy.deepspeed", err)
	}
	c := meta.FindStatusCondition(f.job(t, "job").Status.Conditions, trainer.TrainJobCreated)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != trainer.TrainJobBuildFailedReason || !strings.Contains(c.Message, "mlPolicy.deepspeed: no enabled plugin owns this key") {
		t.Errorf("Created condition = %+v", c)
	}
	if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning JobsBuildFailed") {
		t.Errorf("events = %q, want one Warning JobsBuildFailed", ev)
	}
}

func TestPluginFailureNamesThePluginAndIsRetried(t *testing.T) {
	f := newFixture(t, &fakeBuilder{fail: true}, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	err := f.reconcile(t, "job")
	if err == nil {
		t.Fatal("reconcile succeeded; a failing plugin must make it fail so that it is retried with backoff")
	}
	c := meta.FindStatusCondition(f.job(t, "job").Status.Conditions, trainer.TrainJobCreated)
	if c == nil || c.Message != "plugin FakeBuilder, Build: the disk is full" {
		t.Errorf("Created condition = %+v", c)
	}
	// The same failure again changes nothing and records no new Event.
	f.events()
	_ = f.reconcile(t, "job")
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("a repeated failure recorded events %q", ev)
	}
}

// A TrainJob whose objects are created at its first try gets no Event for
// it (the Created condition says it); one created after a failure gets the
// Warning of the failure and then a Normal JobsCreated, which says that the
// failure is over.
func TestCreatedEventOnlyAfterAFailure(t *testing.T) {
	builder := &fakeBuilder{fail: true}
	f := newFixture(t, builder, runtimeOf("plain", nil), trainJobOf("failing", "plain"), trainJobOf("fine", "plain"))
	if err := f.reconcile(t, "failing"); err == nil {
		t.Fatal("reconcile succeeded with a failing plugin")
	}
	if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning JobsBuildFailed") {
		t.Fatalf("events of a failed build = %q, want one Warning JobsBuildFailed", ev)
	}
	builder.fail = false
	if err := f.reconcile(t, "failing"); err != nil {
		t.Fatal(err)
	}
	if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Normal JobsCreated") {
		t.Errorf("events of a build that works after a failure = %q, want one Normal JobsCreated", ev)
	}
	if err := f.reconcile(t, "fine"); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(f.job(t, "fine").Status.Conditions, trainer.TrainJobCreated); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Created condition of a job built at the first try = %+v", c)
	}
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("events of a job built at the first try = %q, want none", ev)
	}
}

func TestUnchangedObjectsAreNotAppliedAgain(t *testing.T) {
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	applied := objectApplies.WithLabelValues("FakeBuilder", "JobSet", applyResultApplied)
	unchanged := objectApplies.WithLabelValues("FakeBuilder", "JobSet", applyResultUnchanged)
	a0, u0 := testutil.ToFloat64(applied), testutil.ToFloat64(unchanged)

	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(applied) - a0; got != 1 {
		t.Errorf("applied %v times, want 1", got)
	}
	if got := testutil.ToFloat64(unchanged) - u0; got != 1 {
		t.Errorf("left unchanged %v times, want 1", got)
	}

	// A changed desired state (suspend) is applied.
	job := f.job(t, "job")
	job.Spec.Suspend = ptr.To(true)
	if err := f.client.Update(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(applied) - a0; got != 2 {
		t.Errorf("applied %v times after a change, want 2", got)
	}
	js := &jobsetv1alpha2.JobSet{}
	if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, js); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(js.Spec.Suspend, false) {
		t.Error("the JobSet was not suspended")
	}
}

func TestDeadlineCountsFromTheLastResume(t *testing.T) {
	f := newFixture(t, &fakeBuilder{}, runtimeOf("plain", nil))
	// Whole seconds: API timestamps keep no more.
	start := f.clock.Now()
	job := trainJobOf("job", "plain")
	job.CreationTimestamp = metav1.NewTime(start.Add(-time.Hour))
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	job.Status.Conditions = []metav1.Condition{{
		Type: trainer.TrainJobSuspended, Status: metav1.ConditionFalse, Reason: trainer.TrainJobResumedReason,
		LastTransitionTime: metav1.NewTime(start.Add(-30 * time.Second)),
	}}
	if err := f.client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}

	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != 30*time.Second {
		t.Errorf("RequeueAfter = %v, want 30s: the clock restarts at the resume, not at creation", res.RequeueAfter)
	}
	if meta.FindStatusCondition(f.job(t, "job").Status.Conditions, trainer.TrainJobFailed) != nil {
		t.Fatal("failed before the deadline")
	}

	f.clock.SetTime(start.Add(31 * time.Second))
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(f.job(t, "job").Status.Conditions, trainer.TrainJobFailed)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != trainer.TrainJobDeadlineExceededReason {
		t.Errorf("Failed condition = %+v, want DeadlineExceeded", c)
	}
}

func TestTrainJobsOfOtherControllersAreLeftAlone(t *testing.T) {
	job := trainJobOf("job", "missing")
	job.Spec.ManagedBy = ptr.To("kueue.x-k8s.io/multikueue")
	f := newFixture(t, &fakeBuilder{}, job)
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if got := f.job(t, "job").Status.Conditions; len(got) != 0 {
		t.Errorf("conditions = %+v, want none", got)
	}
}

func TestRunningObjectsAreUpdatedOnlyWhenSuspended(t *testing.T) {
	builder := &fakeBuilder{image: "v1"}
	f := newFixture(t, builder, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	image := func() string {
		js := &jobsetv1alpha2.JobSet{}
		if err := f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, js); err != nil {
			t.Fatal(err)
		}
		return js.Annotations["image"]
	}
	kept := objectApplies.WithLabelValues("FakeBuilder", "JobSet", applyResultKeptRunning)
	k0 := testutil.ToFloat64(kept)

	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	builder.image = "v2" // for example, from a runtime patch
	f.relabel(t, "job", "patched")
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if got := image(); got != "v1" {
		t.Errorf("a running JobSet was updated to %q", got)
	}
	if got := testutil.ToFloat64(kept) - k0; got != 1 {
		t.Errorf("kept-running counted %v, want 1", got)
	}

	job := f.job(t, "job")
	job.Spec.Suspend = ptr.To(true)
	if err := f.client.Update(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(t, "job"); err != nil {
		t.Fatal(err)
	}
	if got := image(); got != "v2" {
		t.Errorf("the suspension did not carry the new state: image %q, want v2", got)
	}
}

// trainerSetup does what every ML plugin does first: it finds the trainer
// step, which the runtime of the test lacks.
type trainerSetup struct{}

func (trainerSetup) Describe() framework.Description {
	return framework.Description{Name: "Setup", MLPolicyKeys: []string{framework.NoPolicyKey}}
}

func (trainerSetup) EnforceMLPolicy(_ context.Context, info *framework.Info, job *trainer.TrainJob) error {
	_, _, _, err := info.SetupTrainer(job)
	return err
}

// A runtime that no retry can make runnable (here: no trainer step, and the
// TrainJob is pinned to its snapshot) is not retried with backoff: the
// reconcile's error is terminal, and the Created condition says why and
// that it is not retried.
func TestARuntimeWithoutTrainerStepIsNotRetried(t *testing.T) {
	rt := runtimeOf("stepless", nil)
	rt.Spec.Template.Spec.ReplicatedJobs[0].Name = "workers"
	f := newFixtureOf(t, trainerSetup{}, rt, trainJobOf("job", "stepless"))

	err := f.reconcile(t, "job")
	if !errors.Is(err, reconcile.TerminalError(nil)) || !errors.Is(err, framework.ErrNoTrainerStep) {
		t.Fatalf("reconcile error = %v, want a terminal error saying the runtime has no trainer step", err)
	}
	c := meta.FindStatusCondition(f.job(t, "job").Status.Conditions, trainer.TrainJobCreated)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != trainer.TrainJobInvalidReason ||
		!strings.Contains(c.Message, "the runtime has no trainer step") || !strings.Contains(c.Message, "not retried") {
		t.Errorf("Created condition = %+v, want False, %s, saying why and that it is not retried", c, trainer.TrainJobInvalidReason)
	}
}

// A plugin failure that a retry may fix (the disk is full) stays retried:
// only errors that say the input is wrong are terminal.
func TestATransientPluginFailureIsNotTerminal(t *testing.T) {
	f := newFixture(t, &fakeBuilder{fail: true}, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	if err := f.reconcile(t, "job"); err == nil || errors.Is(err, reconcile.TerminalError(nil)) {
		t.Fatalf("reconcile error = %v, want a retried (non-terminal) error", err)
	}
}
