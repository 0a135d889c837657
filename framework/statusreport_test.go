package framework_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/internal/testfixture"
)

// The one merge of status reports: in plugin order, a later condition
// replaces an earlier one of its type, with the host's transition time
// (kept while its status does not change) and generation; the other
// fields replace the TrainJob's when a report sets them.
func TestApplyToMergesReportsInOrder(t *testing.T) {
	long := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	job := &trainer.TrainJob{}
	job.Generation = 4
	job.Status.Conditions = []metav1.Condition{{Type: "Running", Status: metav1.ConditionTrue, Reason: "Pods", LastTransitionTime: long}}
	job.Status.JobsStatus = []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](2)}}
	job.Status.Nodes = &trainer.NodesStatus{Current: 2}

	framework.ApplyTo(job,
		&framework.StatusReport{
			Conditions: []metav1.Condition{
				{Type: "Running", Status: metav1.ConditionTrue, Reason: "StillRunning", LastTransitionTime: metav1.Now(), ObservedGeneration: 1},
				{Type: "Complete", Status: metav1.ConditionFalse, Reason: "NotYet"},
			},
			JobsStatus: []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](3)}},
		},
		nil,
		&framework.StatusReport{
			Conditions: []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue, Reason: "Done"}},
			Restarts:   &trainer.RestartStatus{Count: 1},
		},
	)
	running, complete := job.Status.Conditions[0], job.Status.Conditions[1]
	if running.Reason != "StillRunning" || !running.LastTransitionTime.Equal(&long) || running.ObservedGeneration != 4 {
		t.Errorf("Running = %+v: want the report's reason, the transition time it had (its status did not change) and the TrainJob's generation", running)
	}
	if complete.Status != metav1.ConditionTrue || complete.Reason != "Done" || complete.ObservedGeneration != 4 {
		t.Errorf("Complete = %+v: want the later report's", complete)
	}
	if diff := cmp.Diff([]trainer.JobStatus{{Name: "node", Active: ptr.To[int32](3)}}, job.Status.JobsStatus); diff != "" {
		t.Errorf("jobsStatus (-want +got):\n%s", diff)
	}
	if job.Status.Restarts == nil || job.Status.Restarts.Count != 1 {
		t.Errorf("restarts = %+v, want the report's", job.Status.Restarts)
	}
	if job.Status.Nodes == nil || job.Status.Nodes.Current != 2 {
		t.Errorf("nodes = %+v: no report set them, want them as they were", job.Status.Nodes)
	}
}

func TestCheckImplementationNamesAStatusOfAnEarlierSDK(t *testing.T) {
	err := framework.CheckImplementation(testfixture.StatusBeforeReport{})
	if err == nil || !strings.Contains(err.Error(), "return *framework.StatusReport") {
		t.Errorf("CheckImplementation = %v, want an error that says what Status must return", err)
	}
	if framework.ImplementationOf(testfixture.StatusBeforeReport{}).StatusReporter != nil {
		t.Error("the old signature implements StatusReporter")
	}
}
