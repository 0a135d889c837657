package volcano_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/plugins/volcano"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

func TestValidate(t *testing.T) {
	topology := func(raw string) func(*trainer.TrainingRuntimeSpec, *trainer.TrainJob) {
		return func(rt *trainer.TrainingRuntimeSpec, _ *trainer.TrainJob) {
			rt.PodGroupPolicy.Volcano.NetworkTopology = &apiextensionsv1.JSON{Raw: []byte(raw)}
		}
	}
	runtimeQueue := func(q string) func(*trainer.TrainingRuntimeSpec, *trainer.TrainJob) {
		return func(rt *trainer.TrainingRuntimeSpec, _ *trainer.TrainJob) {
			rt.Template.ObjectMeta.Annotations[volcano.QueueAnnotation] = q
		}
	}
	for _, tc := range []struct {
		name         string
		change       func(*trainer.TrainingRuntimeSpec, *trainer.TrainJob)
		runtimeCheck bool
		want         []string
	}{
		{name: "a valid gang"},
		{name: "topology with hard mode and no tier", change: topology(`{"mode": "hard"}`)},
		{name: "an empty topology", change: topology(`{}`)},
		{
			name:         "topology with an unknown field, on the runtime",
			change:       topology(`{"mode": "hard", "tier": 2}`),
			runtimeCheck: true,
			want: []string{`spec.podGroupPolicy.volcano.networkTopology: Invalid value: "{\"mode\":\"hard\",\"tier\":2}": json: unknown field "tier"; ` +
				`networkTopology takes mode (hard or soft) and highestTierAllowed (an integer of at least 1)`},
		},
		{
			name:         "topology with another mode, on the runtime",
			change:       topology(`{"mode": "strict"}`),
			runtimeCheck: true,
			want:         []string{`spec.podGroupPolicy.volcano.networkTopology.mode: Unsupported value: "strict": supported values: "hard", "soft"`},
		},
		{
			name:   "topology with tier 0, on a TrainJob",
			change: topology(`{"highestTierAllowed": 0}`),
			want: []string{`spec.runtimeRef: Invalid value: "torch-volcano": the runtime's spec.podGroupPolicy.volcano.networkTopology.highestTierAllowed: ` +
				`Invalid value: 0: must be at least 1: tier 1 is the lowest tier of hyperNodes`},
		},
		{
			name:         "an empty queue on the runtime",
			change:       runtimeQueue(""),
			runtimeCheck: true,
			want: []string{`spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "": ` +
				`the Volcano queue name must not be empty: name a queue, or remove the annotation for the queue "default"`},
		},
		{
			name: "an empty queue on the TrainJob",
			change: func(_ *trainer.TrainingRuntimeSpec, job *trainer.TrainJob) {
				job.Spec.Annotations = map[string]string{volcano.QueueAnnotation: ""}
			},
			want: []string{`spec.annotations[scheduling.volcano.sh/queue-name]: Invalid value: "": ` +
				`the Volcano queue name must not be empty: name a queue, or remove the annotation for the queue "default"`},
		},
		{
			name:   "a queue that cannot be a name, from the runtime, on a TrainJob",
			change: runtimeQueue("Research"),
			want: []string{`spec.runtimeRef: Invalid value: "torch-volcano": the runtime's spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]: ` +
				`Invalid value: "Research": not a Volcano queue name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', ` +
				`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		},
		{
			name: "the initializers' priority is theirs",
			change: func(rt *trainer.TrainingRuntimeSpec, _ *trainer.TrainJob) {
				rt.Template.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.PriorityClassName = "other"
			},
		},
		{
			name: "trainer-step replicatedJobs with two priorities",
			change: func(rt *trainer.TrainingRuntimeSpec, _ *trainer.TrainJob) {
				second := *rt.Template.Spec.ReplicatedJobs[2].DeepCopy()
				second.Name = "workers"
				second.Template.Spec.Template.Spec.PriorityClassName = "low-priority"
				rt.Template.Spec.ReplicatedJobs = append(rt.Template.Spec.ReplicatedJobs, second)
			},
			runtimeCheck: true,
			want: []string{`spec.template.spec.replicatedJobs[3].template.spec.template.spec.priorityClassName: Invalid value: "low-priority": ` +
				`the Volcano PodGroup of the trainer step has one priority, and spec.template.spec.replicatedJobs[2].template.spec.template.spec.priorityClassName is "high-priority": ` +
				`give the trainer step's replicatedJobs the same priorityClassName`},
		},
		{
			name: "no trainer step, on a TrainJob",
			change: func(rt *trainer.TrainingRuntimeSpec, _ *trainer.TrainJob) {
				rt.Template.Spec.ReplicatedJobs = rt.Template.Spec.ReplicatedJobs[:2]
			},
			want: []string{`spec.runtimeRef: Invalid value: "torch-volcano": ` +
				`podGroupPolicy.volcano: gang scheduling holds the trainer step, and the runtime has none: label a replicatedJob trainer.kubeflow.org/trainjob-ancestor-step=trainer`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sdktest.CaseFromFiles(t, "gang", "testdata/gang.yaml", "testdata/gang.yaml")
			kind := framework.ValidateTrainJob
			if tc.runtimeCheck {
				c.Job = framework.RuntimeCheckJob(c.Job.Spec.RuntimeRef.Name)
				kind = framework.ValidateRuntime
			}
			if tc.change != nil {
				tc.change(c.Runtime, c.Job)
			}
			info, err := framework.NewInfo(c.Job, c.Runtime)
			if err != nil {
				t.Fatal(err)
			}
			warnings, errs, err := sdktest.Connect(t, volcano.New()).Validate(context.Background(), framework.ValidateRequest{Kind: kind, Info: info, NewJob: c.Job})
			if err != nil {
				t.Fatalf("Validate failed as a call: %v", err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings %q, want none", warnings)
			}
			if diff := cmp.Diff(tc.want, messages(errs)); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
}

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// TestBuildRefusesWhatValidateRejects: a runtime stored before the plugin
// was enabled never went through its admission; Build says what is wrong
// instead of building a PodGroup the CRD refuses.
func TestBuildRefusesWhatValidateRejects(t *testing.T) {
	c := sdktest.CaseFromFiles(t, "gang", "testdata/gang.yaml", "testdata/gang.yaml")
	c.Runtime.PodGroupPolicy.Volcano.NetworkTopology = &apiextensionsv1.JSON{Raw: []byte(`{"mode": "strict"}`)}
	info, err := framework.NewInfo(c.Job, c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sdktest.Connect(t, volcano.New()).Build(context.Background(), info, c.Job)
	want := `spec.podGroupPolicy.volcano.networkTopology.mode: Unsupported value: "strict": supported values: "hard", "soft"`
	if err == nil || err.Error() != want {
		t.Errorf("Build error %v, want %q", err, want)
	}
}
