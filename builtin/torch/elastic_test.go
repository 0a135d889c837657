package torch

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// elasticRuntime is labelledRuntime with an elasticPolicy.
func elasticRuntime(t *testing.T, policy string) *trainer.TrainingRuntimeSpec {
	t.Helper()
	doc := strings.Replace(labelledRuntime, "    torch: {}\n", "    torch:\n      elasticPolicy:\n"+policy, 1)
	if doc == labelledRuntime {
		t.Fatal("the runtime fixture has no `torch: {}` to replace")
	}
	return frameworktest.Runtime(t, doc)
}

func elasticJob(t *testing.T, nodes *int32) *trainer.TrainJob {
	job := frameworktest.TrainJob(t, labelledJob)
	job.UID = types.UID("0b9c6f36-5d0e-4a1e-9a39-3d3c2f0d8e11")
	if nodes != nil {
		job.Spec.Trainer = &trainer.Trainer{NumNodes: nodes}
	}
	return job
}

func TestEnforceElastic(t *testing.T) {
	spec := elasticRuntime(t, "        minNodes: 2\n        maxNodes: 4\n        maxRestarts: 5\n")
	for _, nodes := range []int32{2, 3, 4} {
		job := elasticJob(t, ptr.To(nodes))
		info := frameworktest.NewInfo(t, job, spec)
		if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
			t.Fatal(err)
		}
		ps, c := trainerOrDie(t, info)
		if ps.Count != nodes {
			t.Errorf("numNodes %d: trainer count %d", nodes, ps.Count)
		}
		if diff := cmp.Diff(&framework.CountRange{Min: 2, Max: 4}, ps.Elastic); diff != "" {
			t.Errorf("numNodes %d: Elastic (-want +got):\n%s", nodes, diff)
		}
		// The same variables at every size: a resize leaves the pod
		// template as it is.
		wantEnv := []corev1.EnvVar{
			{Name: "LOG_LEVEL", Value: "info"},
			{Name: "NCCL_DEBUG", Value: "WARN"},
			{Name: "PET_NNODES", Value: "2:4"},
			{Name: "PET_NPROC_PER_NODE", Value: "auto"},
			nodeRank(),
			{Name: "PET_RDZV_BACKEND", Value: "c10d"},
			{Name: "PET_RDZV_ENDPOINT", Value: "llm-node-0-0.llm.team-a.svc.cluster.local:29500"},
			{Name: "PET_RDZV_ID", Value: "0b9c6f36-5d0e-4a1e-9a39-3d3c2f0d8e11"},
			{Name: "PET_MAX_RESTARTS", Value: "5"},
			{Name: "PET_MASTER_ADDR", Value: "llm-node-0-0.llm"},
			{Name: "PET_MASTER_PORT", Value: "29500"},
		}
		if diff := cmp.Diff(wantEnv, c.Env); diff != "" {
			t.Errorf("numNodes %d: trainer env (-want +got):\n%s", nodes, diff)
		}
	}
}

func TestEnforceElasticDefaults(t *testing.T) {
	// No bounds: the job's size is both; no maxRestarts: DefaultMaxRestarts.
	spec := elasticRuntime(t, "        {}\n")
	spec.MLPolicy.Torch.ElasticPolicy = &trainer.TorchElasticPolicy{}
	job := elasticJob(t, ptr.To[int32](3))
	info := frameworktest.NewInfo(t, job, spec)
	if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	ps, c := trainerOrDie(t, info)
	if diff := cmp.Diff(&framework.CountRange{Min: 3, Max: 3}, ps.Elastic); diff != "" {
		t.Errorf("Elastic (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{"PET_NNODES": "3:3", "PET_MAX_RESTARTS": "3"} {
		if v, _ := env(c, name); v.Value != want {
			t.Errorf("%s = %q, want %q", name, v.Value, want)
		}
	}
}

func TestEnforceElasticOutOfBounds(t *testing.T) {
	spec := elasticRuntime(t, "        minNodes: 2\n        maxNodes: 4\n")
	job := elasticJob(t, ptr.To[int32](5))
	info := frameworktest.NewInfo(t, job, spec)
	err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job)
	if err == nil || !framework.IsInvalidJob(err) || !strings.Contains(err.Error(), "spec.trainer.numNodes") || !strings.Contains(err.Error(), "between 2 and 4") {
		t.Errorf("EnforceMLPolicy with numNodes 5 of [2, 4]: %v, want an invalid job naming spec.trainer.numNodes and the bounds", err)
	}
}

func TestNotElasticUnchanged(t *testing.T) {
	// Kubeflow compatibility: without elasticPolicy nothing is elastic.
	job := elasticJob(t, ptr.To[int32](2))
	info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, labelledRuntime))
	if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	ps, c := trainerOrDie(t, info)
	if ps.Elastic != nil {
		t.Errorf("Elastic = %+v, want nil without elasticPolicy", ps.Elastic)
	}
	for _, name := range []string{EnvRdzvBackend, EnvRdzvEndpoint, EnvRdzvID, EnvMaxRestarts} {
		if _, ok := env(c, name); ok {
			t.Errorf("%s set without elasticPolicy", name)
		}
	}
	objs, err := New().(framework.Builder).Build(context.Background(), info, job)
	if err != nil || len(objs) != 0 {
		t.Errorf("Build without elasticPolicy = %v, %v; want nothing", objs, err)
	}
}

func TestValidateElastic(t *testing.T) {
	spec := elasticRuntime(t, "        minNodes: 2\n        maxNodes: 4\n")
	plain := frameworktest.Runtime(t, labelledRuntime)
	cases := []struct {
		name     string
		spec     *trainer.TrainingRuntimeSpec
		old, new *int32
		want     string
	}{
		{name: "within bounds", spec: spec, new: ptr.To[int32](3)},
		{name: "resized within bounds", spec: spec, old: ptr.To[int32](2), new: ptr.To[int32](4)},
		{name: "above maxNodes on create", spec: spec, new: ptr.To[int32](5), want: "spec.trainer.numNodes: Invalid value: 5: must be between 2 and 4, the minNodes and maxNodes of the runtime's mlPolicy.torch.elasticPolicy"},
		// A resize is the CRD's rule (against status.nodes), which also
		// guards the scale subresource that this webhook does not see.
		{name: "resized past maxNodes: the CRD's to refuse", spec: spec, old: ptr.To[int32](2), new: ptr.To[int32](5)},
		{name: "below minNodes on create", spec: spec, new: ptr.To[int32](1), want: "spec.trainer.numNodes: Invalid value: 1: must be between 2 and 4"},
		{name: "runtime's numNodes out of bounds", spec: spec, want: "(the runtime's mlPolicy.numNodes applies while spec.trainer.numNodes is unset)"},
		{name: "above maxNodes, without minNodes", spec: elasticRuntime(t, "        maxNodes: 4\n"), new: ptr.To[int32](5), want: "spec.trainer.numNodes: Invalid value: 5: must be at most 4, the maxNodes of the runtime's mlPolicy.torch.elasticPolicy"},
		{name: "below minNodes, without maxNodes", spec: elasticRuntime(t, "        minNodes: 2\n"), new: ptr.To[int32](1), want: "spec.trainer.numNodes: Invalid value: 1: must be at least 2, the minNodes of the runtime's mlPolicy.torch.elasticPolicy"},
		{name: "not elastic, unchanged", spec: plain, old: ptr.To[int32](2), new: ptr.To[int32](2)},
		{name: "not elastic, resized: the CRD's to refuse", spec: plain, old: ptr.To[int32](2), new: ptr.To[int32](3)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := elasticJob(t, tc.new)
			req := framework.ValidateRequest{Info: frameworktest.NewInfo(t, job, tc.spec), NewJob: job}
			if tc.old != nil {
				req.OldJob = elasticJob(t, tc.old)
			}
			_, errs, err := New().(framework.Validator).Validate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			got := errs.ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("Validate: %v, want no error", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Errorf("Validate: %v, want an error containing %q", got, tc.want)
			}
		})
	}
}

func TestValidateElasticRuntime(t *testing.T) {
	// minNodes above maxNodes, or a bound below 1, is the CRD's rule
	// (test/badinput's "Manifests the API server refuses").
	//
	// Without minNodes, the runtime's numNodes is the lower bound: the
	// error is on the bound that is set.
	noMin := elasticRuntime(t, "        maxNodes: 2\n")
	noMin.MLPolicy.NumNodes = ptr.To[int32](4)
	req := framework.RuntimeCheck(frameworktest.NewInfo(t, framework.RuntimeCheckJob("r"), noMin), "r")
	_, errs, _ := New().(framework.Validator).Validate(context.Background(), req)
	if want := "spec.mlPolicy.torch.elasticPolicy.maxNodes: Invalid value: 2: must be at least 4, the runtime's mlPolicy.numNodes"; errs.ToAggregate() == nil || !strings.Contains(errs.ToAggregate().Error(), want) {
		t.Errorf("Validate of a runtime with numNodes 4 and maxNodes 2: %v, want an error containing %q", errs, want)
	}
	// A runtime whose default size is outside the range is fine: its
	// TrainJobs set numNodes.
	good := elasticRuntime(t, "        minNodes: 2\n        maxNodes: 4\n")
	req = framework.RuntimeCheck(frameworktest.NewInfo(t, framework.RuntimeCheckJob("r"), good), "r")
	if _, errs, _ := New().(framework.Validator).Validate(context.Background(), req); len(errs) > 0 {
		t.Errorf("Validate of a runtime with [2, 4]: %v, want none", errs)
	}
}

func TestValidateElasticTorchTune(t *testing.T) {
	spec := elasticRuntime(t, "        minNodes: 1\n        maxNodes: 2\n")
	job := elasticJob(t, ptr.To[int32](1))
	job.Spec.Trainer.Command = []string{"tune", "run"}
	_, errs, _ := New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Info: frameworktest.NewInfo(t, job, spec), NewJob: job})
	if errs.ToAggregate() == nil || !strings.Contains(errs.ToAggregate().Error(), "cannot run with the runtime's mlPolicy.torch.elasticPolicy") {
		t.Errorf("Validate of an elastic tune run: %v, want the elasticPolicy refused", errs)
	}
}

func TestBuildAutoscaler(t *testing.T) {
	spec := elasticRuntime(t, `        minNodes: 2
        maxNodes: 6
        metrics:
          - type: Resource
            resource:
              name: cpu
              target:
                type: Utilization
                averageUtilization: 80
`)
	job := elasticJob(t, ptr.To[int32](3))
	info := frameworktest.NewInfo(t, job, spec)
	p := New()
	if err := p.(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	objs, err := p.(framework.Builder).Build(context.Background(), info, job)
	if err != nil || len(objs) != 1 {
		t.Fatalf("Build = %d objects, %v; want one HorizontalPodAutoscaler", len(objs), err)
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := framework.FromUnstructured(objs[0].Unstructured, hpa); err != nil {
		t.Fatal(err)
	}
	want := autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "llm"},
		MinReplicas:    ptr.To[int32](2),
		MaxReplicas:    6,
		Metrics:        spec.MLPolicy.Torch.ElasticPolicy.Metrics,
	}
	if diff := cmp.Diff(want, hpa.Spec); diff != "" {
		t.Errorf("HPA spec (-want +got):\n%s", diff)
	}
	if hpa.Name != "llm" || objs[0].GroupVersionKind() != HPAGVK {
		t.Errorf("built %s %q, want HorizontalPodAutoscaler llm", objs[0].GroupVersionKind(), hpa.Name)
	}
}

// A metric the HorizontalPodAutoscaler's validation refuses is refused at
// admission, naming the field: on the runtime, and on a new TrainJob of
// a runtime admitted before the rule (not on an update of a running one:
// a queue must still be able to suspend it).
func TestValidateElasticMetrics(t *testing.T) {
	spec := elasticRuntime(t, `        minNodes: 2
        maxNodes: 4
        metrics:
          - type: Resource
            resource: {name: cpu, target: {type: Utilization}}
`)
	const want = "spec.mlPolicy.torch.elasticPolicy.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization"
	validate := func(req framework.ValidateRequest) error {
		t.Helper()
		_, errs, err := New().(framework.Validator).Validate(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return errs.ToAggregate()
	}
	req := framework.RuntimeCheck(frameworktest.NewInfo(t, framework.RuntimeCheckJob("r"), spec), "r")
	if got := validate(req); got == nil || got.Error() != want {
		t.Errorf("Validate of the runtime: %v, want %q", got, want)
	}
	job := elasticJob(t, ptr.To[int32](2))
	info := frameworktest.NewInfo(t, job, spec)
	if got := validate(framework.ValidateRequest{Info: info, NewJob: job}); got == nil || got.Error() != want {
		t.Errorf("Validate of a new TrainJob: %v, want %q", got, want)
	}
	if got := validate(framework.ValidateRequest{Info: info, OldJob: job.DeepCopy(), NewJob: job}); got != nil {
		t.Errorf("Validate of an update: %v, want none", got)
	}
}
