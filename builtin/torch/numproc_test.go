package torch

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// TestEnforceNumProcPerNode has one case per rule of numProcPerNode.
func TestEnforceNumProcPerNode(t *testing.T) {
	cases := []struct {
		name             string
		runtimeNPP       *intstr.IntOrString
		runtimeResources *corev1.ResourceRequirements
		jobNPP           *intstr.IntOrString
		jobResources     *corev1.ResourceRequirements
		want             string
	}{
		{name: "integer from the TrainJob", runtimeNPP: ios("1"), jobNPP: ioi(8), want: "8"},
		{name: "integer string from the TrainJob", runtimeNPP: ios("1"), jobNPP: ios("5"), want: "5"},
		{name: "integer from the runtime", runtimeNPP: ioi(3), want: "3"},
		{name: "integer string from the runtime when the TrainJob sets none", runtimeNPP: ios("2"), want: "2"},
		{name: "keyword from the runtime when the TrainJob sets none", runtimeNPP: ios("cpu"),
			runtimeResources: resources(nil, list("cpu", "6")), want: "6"},
		{name: "auto by default, nothing to resolve it with", want: "auto"},
		{name: "integer ignores resources", jobNPP: ioi(2),
			runtimeResources: resources(list("nvidia.com/gpu", "8"), nil), want: "2"},
		{name: "gpu from GPU limits", jobNPP: ios("gpu"),
			runtimeResources: resources(list("nvidia.com/gpu", "4", "cpu", "16"), list("cpu", "8")), want: "4"},
		{name: "gpu from GPU requests", jobNPP: ios("gpu"),
			runtimeResources: resources(nil, list("amd.com/gpu", "2", "cpu", "16")), want: "2"},
		{name: "gpu limits before requests", jobNPP: ios("gpu"),
			runtimeResources: resources(list("nvidia.com/gpu", "8"), list("nvidia.com/gpu", "2")), want: "8"},
		{name: "gpu without GPUs stays gpu", jobNPP: ios("gpu"),
			runtimeResources: resources(list("cpu", "4"), nil), want: "gpu"},
		{name: "cpu with fractional CPU rounds down", jobNPP: ios("cpu"),
			runtimeResources: resources(nil, list("cpu", "2500m")), want: "2"},
		{name: "cpu with less than one CPU is 1", jobNPP: ios("cpu"),
			runtimeResources: resources(nil, list("cpu", "500m")), want: "1"},
		{name: "cpu unset is 1", jobNPP: ios("cpu"),
			runtimeResources: resources(nil, list("memory", "8Gi")), want: "1"},
		{name: "cpu limits before requests", jobNPP: ios("cpu"),
			runtimeResources: resources(list("cpu", "4"), list("cpu", "2")), want: "4"},
		{name: "cpu ignores GPUs", jobNPP: ios("cpu"),
			runtimeResources: resources(list("nvidia.com/gpu", "8", "cpu", "3"), nil), want: "3"},
		{name: "auto with GPUs", jobNPP: ios("auto"),
			runtimeResources: resources(list("nvidia.com/gpu", "2", "cpu", "32"), nil), want: "2"},
		{name: "auto with CPUs only", jobNPP: ios("auto"),
			runtimeResources: resources(nil, list("cpu", "7500m", "memory", "8Gi")), want: "7"},
		{name: "auto with nothing stays auto", jobNPP: ios("auto"),
			runtimeResources: resources(nil, list("memory", "8Gi")), want: "auto"},
		{name: "resourcesPerNode from the TrainJob replaces the runtime's", jobNPP: ios("gpu"),
			runtimeResources: resources(list("nvidia.com/gpu", "1"), nil),
			jobResources:     resources(list("nvidia.com/gpu", "8"), nil), want: "8"},
		{name: "resourcesPerNode from the TrainJob resolves the runtime's auto",
			jobResources: resources(nil, list("cpu", "12")), want: "12"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, job := frameworktest.Seed(t, frameworktest.SeedTorch)
			spec.MLPolicy.Torch.NumProcPerNode = tc.runtimeNPP
			if tc.runtimeResources != nil {
				spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Resources = *tc.runtimeResources
			}
			job.Spec.Trainer.NumProcPerNode = tc.jobNPP
			job.Spec.Trainer.ResourcesPerNode = tc.jobResources
			info := frameworktest.NewInfo(t, job, spec)
			if err := New().(framework.MLPolicyEnforcer).EnforceMLPolicy(context.Background(), info, job); err != nil {
				t.Fatal(err)
			}
			_, c := trainerOrDie(t, info)
			want := corev1.EnvVar{Name: EnvNumProcPerNode, Value: tc.want}
			got, _ := env(c, EnvNumProcPerNode)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", EnvNumProcPerNode, diff)
			}
		})
	}
}

// TestResolveNumProcPerNode covers the exported resolver directly,
// including an invalid value, which it returns unchanged.
func TestResolveNumProcPerNode(t *testing.T) {
	cases := []struct {
		v    intstr.IntOrString
		res  *corev1.ResourceRequirements
		want string
	}{
		{v: intstr.FromInt(3), want: "3"},
		{v: intstr.FromString("abc"), want: "abc"},
		{v: intstr.FromString("gpu"), res: resources(list("nvidia.com/gpu", "2", "amd.com/gpu", "1"), nil), want: "3"},
		{v: intstr.FromString("cpu"), want: "1"},
		{v: intstr.FromString("auto"), want: "auto"},
	}
	for _, tc := range cases {
		res := corev1.ResourceRequirements{}
		if tc.res != nil {
			res = *tc.res
		}
		if got := ResolveNumProcPerNode(tc.v, res); got != tc.want {
			t.Errorf("ResolveNumProcPerNode(%s) = %q, want %q", tc.v.String(), got, tc.want)
		}
	}
}
