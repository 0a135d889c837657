package torch

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

func TestValidate(t *testing.T) {
	petDetail := "the Torch plugin sets the PET_* variables itself"
	_, seedJob := frameworktest.Seed(t, frameworktest.SeedTorch)
	noTrainer := &framework.Info{Version: framework.InfoVersion, PodSets: []framework.PodSet{{Name: "launcher", Containers: []framework.Container{{Name: "a"}}}}}
	cases := []struct {
		name       string
		runtimeNPP *intstr.IntOrString
		trainer    *trainer.Trainer
		nilJob     bool
		info       *framework.Info // overrides the Info built from the runtime
		nilInfo    bool
		// runtimeCheck validates the runtime's stand-in (with the
		// trainer given) instead of the TrainJob.
		runtimeCheck bool
		want         field.ErrorList
	}{
		{name: "the seed job is valid", trainer: seedJob.Spec.Trainer},
		{name: "no trainer section is valid"},
		{name: "integer", trainer: &trainer.Trainer{NumProcPerNode: ioi(4)}},
		{name: "integer string", trainer: &trainer.Trainer{NumProcPerNode: ios("4")}},
		{name: "auto", trainer: &trainer.Trainer{NumProcPerNode: ios("auto")}},
		{name: "cpu", trainer: &trainer.Trainer{NumProcPerNode: ios("cpu")}},
		{name: "gpu", trainer: &trainer.Trainer{NumProcPerNode: ios("gpu")}},
		{name: "PET_ env is forbidden",
			trainer: &trainer.Trainer{Env: []corev1.EnvVar{{Name: "TRAIN_JOB", Value: "x"}, {Name: "PET_NNODES", Value: "9"}, {Name: "PET_CUSTOM", Value: "x"}}},
			want: field.ErrorList{
				field.Forbidden(field.NewPath("spec", "trainer", "env").Index(1).Child("name"), petDetail),
				field.Forbidden(field.NewPath("spec", "trainer", "env").Index(2).Child("name"), petDetail),
			}},
		{name: "lower-case pet_ is not ours",
			trainer: &trainer.Trainer{Env: []corev1.EnvVar{{Name: "pet_nnodes", Value: "9"}}}},
		{name: "abc", trainer: &trainer.Trainer{NumProcPerNode: ios("abc")},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "numProcPerNode"), "abc", "")}},
		{name: "0", trainer: &trainer.Trainer{NumProcPerNode: ioi(0)},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "numProcPerNode"), "0", "")}},
		{name: "-1", trainer: &trainer.Trainer{NumProcPerNode: ioi(-1)},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "numProcPerNode"), "-1", "")}},
		{name: `"0"`, trainer: &trainer.Trainer{NumProcPerNode: ios("0")},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "numProcPerNode"), "0", "")}},
		{name: "GPU (upper case) is not a keyword", trainer: &trainer.Trainer{NumProcPerNode: ios("GPU")},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "numProcPerNode"), "GPU", "")}},
		{name: "bad runtime value in effect", runtimeNPP: ios("abc"),
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "mlPolicy", "torch", "numProcPerNode"), "abc", "")}},
		{name: "bad runtime value checked with no TrainJob", runtimeNPP: ioi(-1), nilJob: true,
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "mlPolicy", "torch", "numProcPerNode"), "-1", "")}},
		{name: "bad runtime value overridden by the TrainJob", runtimeNPP: ios("abc"),
			trainer: &trainer.Trainer{NumProcPerNode: ioi(2)}},
		{name: "both errors together",
			trainer: &trainer.Trainer{NumProcPerNode: ios("many"), Env: []corev1.EnvVar{{Name: "PET_MASTER_ADDR", Value: "x"}}},
			want: field.ErrorList{
				field.Forbidden(field.NewPath("spec", "trainer", "env").Index(0).Child("name"), petDetail),
				field.Invalid(field.NewPath("spec", "trainer", "numProcPerNode"), "many", ""),
			}},
		{name: "nil Info checks the TrainJob only", nilInfo: true,
			trainer: &trainer.Trainer{NumProcPerNode: ios("abc")},
			want:    field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "numProcPerNode"), "abc", "")}},
		{name: "Info without a trainer PodSet", info: noTrainer,
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "runtimeRef"), "torch-distributed", "")}},
		{name: "a runtime without a trainer PodSet, on its own admission", info: noTrainer, runtimeCheck: true,
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "template"), "", "the runtime has no trainer step")}},
		{name: "nil Info and nil TrainJob", nilInfo: true, nilJob: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := frameworktest.Runtime(t, labelledRuntime)
			spec.MLPolicy.Torch.NumProcPerNode = tc.runtimeNPP
			job := frameworktest.TrainJob(t, labelledJob)
			info := frameworktest.NewInfo(t, job, spec)
			job.Spec.Trainer = tc.trainer
			switch {
			case tc.nilInfo:
				info = nil
			case tc.info != nil:
				info = tc.info
			}
			kind := framework.ValidateTrainJob
			if tc.runtimeCheck {
				job = framework.RuntimeCheckJob("torch-distributed")
				kind = framework.ValidateRuntime
			}
			if tc.nilJob {
				job = nil
			}
			warnings, errs, _ := New().(framework.Validator).Validate(context.Background(), framework.ValidateRequest{Kind: kind, Info: info, NewJob: job})
			if len(warnings) != 0 {
				t.Errorf("warnings %q, want none", warnings)
			}
			if diff := cmp.Diff(tc.want, errs, cmpopts.IgnoreFields(field.Error{}, "Detail")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			for i := range min(len(errs), len(tc.want)) {
				if tc.want[i].Detail != "" && !strings.Contains(errs[i].Detail, tc.want[i].Detail) {
					t.Errorf("error %d detail %q, want it to contain %q", i, errs[i].Detail, tc.want[i].Detail)
				}
			}
		})
	}
}
