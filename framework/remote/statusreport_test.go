package remote

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// An out-of-process plugin answers with a TrainJobStatus: its report is
// the fields a plugin sets; a field the host writes, changed, is an error
// that names it (the report has no room for it, and dropping it would say
// nothing). The same field as the TrainJob has it (a plugin that answers
// with a changed copy of the TrainJob's status) is no change.
func TestStatusReportOfAHostField(t *testing.T) {
	job := &trainer.TrainJob{}
	job.Status.RuntimeSnapshot = &trainer.RuntimeSnapshot{APIGroup: trainer.GroupVersion.Group, Kind: trainer.ClusterTrainingRuntimeKind, Name: "rt"}
	job.Status.TrainerStatus = &trainer.TrainerStatus{ProgressPercentage: ptr.To[int32](10)}
	cond := metav1.Condition{Type: "Mine", Status: metav1.ConditionTrue, Reason: "Reported"}

	echo := job.Status.DeepCopy()
	echo.Conditions = []metav1.Condition{cond}
	changed := job.Status.DeepCopy()
	changed.Conditions = []metav1.Condition{cond}
	changed.TrainerStatus.ProgressPercentage = ptr.To[int32](90)
	changed.RuntimeSnapshot = nil
	for _, tc := range []struct {
		name    string
		status  *trainer.TrainJobStatus
		wantErr string
	}{
		{name: "a copy of the TrainJob's status with a condition added", status: echo},
		{name: "only the reported fields", status: &trainer.TrainJobStatus{Conditions: []metav1.Condition{cond}}},
		{name: "trainerStatus changed", status: changed, wantErr: "the status sets status.trainerStatus, which the host writes"},
		{name: "lastCheckpoint set", status: &trainer.TrainJobStatus{LastCheckpoint: &trainer.CheckpointStatus{Step: 3}}, wantErr: "status.lastCheckpoint"},
		{name: "lastRunStart set", status: &trainer.TrainJobStatus{LastRunStart: &trainer.RunStartStatus{FromStep: 3}}, wantErr: "status.lastRunStart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := statusReport(job, tc.status)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&framework.StatusReport{Conditions: []metav1.Condition{cond}}, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
		})
	}
}
