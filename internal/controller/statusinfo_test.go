package controller

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// infoReporter is fakeBuilder that also enforces (it marks Info, as an ML
// plugin marks a PodSet elastic) and records the Info of each Status.
type infoReporter struct {
	countingBuilder
	statusInfo []*framework.Info
}

func (r *infoReporter) Describe() framework.Description {
	d := r.countingBuilder.Describe()
	d.Name = "InfoReporter"
	return d
}

func (*infoReporter) EnforceMLPolicy(_ context.Context, info *framework.Info, _ *trainer.TrainJob) error {
	framework.MergeMap(&info.Labels, map[string]string{"enforced": "yes"})
	return nil
}

func (r *infoReporter) Status(_ context.Context, info *framework.Info, _ *trainer.TrainJob, owned []*unstructured.Unstructured) (*framework.StatusReport, error) {
	r.statusInfo = append(r.statusInfo, info)
	return nil, nil
}

// TestStatusSeesInfo: the status plugins get the Info the objects were
// built from, after Enforce, on a reconcile that builds and on one the
// memo spares the plugins; without a runtime they get none.
func TestStatusSeesInfo(t *testing.T) {
	r := &infoReporter{}
	f := newFixtureOf(t, r, runtimeOf("plain", nil), trainJobOf("job", "plain"))
	for range 3 {
		if err := f.reconcile(t, "job"); err != nil {
			t.Fatal(err)
		}
	}
	if r.builds >= len(r.statusInfo) {
		t.Fatalf("%d builds for %d status reads: no reconcile was spared by the memo", r.builds, len(r.statusInfo))
	}
	for i, info := range r.statusInfo {
		if info == nil || info.Labels["enforced"] != "yes" {
			t.Errorf("Status %d got Info %+v, want the Info Build got, after Enforce", i, info)
		}
	}

	// Started before snapshots, its runtime deleted since: no Info.
	old := trainJobOf("old", "gone")
	old.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobCreated, Status: metav1.ConditionTrue, Reason: trainer.TrainJobJobsCreatedReason, LastTransitionTime: metav1.Now()}}
	r = &infoReporter{}
	f = newFixtureOf(t, r, old)
	if err := f.reconcile(t, "old"); err != nil {
		t.Fatal(err)
	}
	if len(r.statusInfo) != 1 || r.statusInfo[0] != nil {
		t.Errorf("without a runtime, Status got Info %v, want one call with none", r.statusInfo)
	}
}
