package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The design-floor row, on a real API server (envtest), at a small N, in
// two interleaved rounds beside the raw floor: every TrainJob ends with the
// JobSet the built-ins build, owned by it, and a Created condition, made
// with exactly one create of the JobSet and one status update each; the
// table has the rows in interleaved order and the medians' table has the
// design floor at 1.00×.
func TestDesignFloorRow(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	const n = 10
	o, err := parseFlags([]string{"-n", fmt.Sprint(n), "-rows", "design-floor,floor", "-rounds", "2", "-out", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	o.afterRow = func(ctx context.Context, row rowSpec, admin client.Client) error {
		if row.kind != rowDesignFloor {
			return nil
		}
		checked++
		if err := checkDesignFloorLeft(ctx, admin, n); err != nil {
			t.Errorf("round %d: %v", checked, err)
		}
		return nil
	}
	var out strings.Builder
	results, err := o.execute(&out)
	if err != nil {
		t.Fatalf("execute: %v\n%s", err, out.String())
	}
	table := out.String()
	t.Log("\n" + table)
	if checked != 2 {
		t.Errorf("the design-floor row ran %d times, want 2", checked)
	}

	var labels []string
	for _, r := range results {
		labels = append(labels, r.label)
		if r.kind != rowDesignFloor {
			continue
		}
		// Exactly the writes any controller must make: nothing else is
		// counted in the row's window (its list and watch precede it).
		want := map[string]int{"create jobsets": n, "update trainjobs/status": n}
		for k, v := range want {
			if r.req.byResource[k] != v {
				t.Errorf("%s: %d %q, want %d (all: %v)", r.label, r.req.byResource[k], k, v, r.req.byResource)
			}
		}
		if r.req.writes() != 2*n {
			t.Errorf("%s: %d writes, want %d (all: %v)", r.label, r.req.writes(), 2*n, r.req.byResource)
		}
		if len(r.jobSet) != n || len(r.created) != n {
			t.Errorf("%s: %d JobSet and %d Created latencies, want %d each", r.label, len(r.jobSet), len(r.created), n)
		}
	}
	wantLabels := []string{"design-floor (round 1)", "floor (round 1)", "design-floor (round 2)", "floor (round 2)"}
	if strings.Join(labels, ", ") != strings.Join(wantLabels, ", ") {
		t.Errorf("rows ran in the order %v, want %v (interleaved)", labels, wantLabels)
	}
	// The table's row: against itself 1.00×, with Created latencies
	// (not "–" as for the raw floor, which makes no TrainJob).
	row := regexp.MustCompile(`(?m)^\| design-floor \(round 1\) \| [0-9.]+ \| [0-9]+ \| [0-9.]+× \| 1\.00× \| [0-9./ ]+ \| [0-9./ ]+ \|`)
	if !row.MatchString(table) {
		t.Errorf("the table has no design-floor row with its ratio and Created latencies:\n%s", table)
	}
	if !regexp.MustCompile(`(?m)^\| floor \(round 2\) \| [0-9.]+ \| [0-9]+ \| 1\.00× \| [0-9.]+× \|`).MatchString(table) {
		t.Errorf("the table has no floor row against the design floor:\n%s", table)
	}
	if !regexp.MustCompile(`(?m)^\| design-floor \| 2 \| [0-9.]+ \([0-9.]+–[0-9.]+\) \| 1\.00× \(1\.00–1\.00×\) \|`).MatchString(table) {
		t.Errorf("the medians' table has no design-floor row at 1.00×:\n%s", table)
	}
	if !strings.Contains(table, "- design-floor (round 1): create jobsets 1.00 · update trainjobs/status 1.00") {
		t.Errorf("the requests per TrainJob of the design floor are not one JobSet create and one status update:\n%s", table)
	}
}

// checkDesignFloorLeft says what is wrong with the TrainJobs and JobSets a
// design-floor row left: each TrainJob must have its Created condition and
// a JobSet of its name whose controller is the TrainJob.
func checkDesignFloorLeft(ctx context.Context, admin client.Client, n int) error {
	var jobs trainer.TrainJobList
	if err := admin.List(ctx, &jobs, client.InNamespace(namespace)); err != nil {
		return err
	}
	var jobSets jobsetv1alpha2.JobSetList
	if err := admin.List(ctx, &jobSets, client.InNamespace(namespace)); err != nil {
		return err
	}
	if len(jobs.Items) != n || len(jobSets.Items) != n {
		return fmt.Errorf("%d TrainJobs and %d JobSets, want %d each", len(jobs.Items), len(jobSets.Items), n)
	}
	owners := map[string]*metav1.OwnerReference{}
	for i := range jobSets.Items {
		owners[jobSets.Items[i].Name] = metav1.GetControllerOf(&jobSets.Items[i])
	}
	var problems []string
	for _, j := range jobs.Items {
		if c := meta.FindStatusCondition(j.Status.Conditions, trainer.TrainJobCreated); c == nil || c.Status != metav1.ConditionTrue {
			problems = append(problems, fmt.Sprintf("%s has no Created condition True (%v)", j.Name, j.Status.Conditions))
		}
		ref, ok := owners[j.Name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s has no JobSet", j.Name))
		case ref == nil || ref.Kind != trainer.TrainJobKind || ref.UID != j.UID:
			problems = append(problems, fmt.Sprintf("the JobSet %s is not controlled by its TrainJob (controller %v, TrainJob UID %s)", j.Name, ref, j.UID))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}
