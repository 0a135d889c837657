package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// reportedStatusFields are the fields of TrainJobStatus a status plugin
// reports (framework.StatusReport's), by their Go names. The others
// (runtimeSnapshot, trainerStatus, lastCheckpoint, ...) are written by the
// host: the controller and the status endpoint.
var reportedStatusFields = map[string]bool{"Conditions": true, "JobsStatus": true, "Restarts": true, "Nodes": true}

// statusReport turns the TrainJobStatus a plugin answered into its
// report, refusing one that changes a field the host writes: the report
// has no room for it, and dropping it would say nothing. A plugin that
// answers with a copy of the TrainJob's status with its own fields
// changed (the fields the host writes as the TrainJob has them) passes.
func statusReport(job *trainer.TrainJob, st *trainer.TrainJobStatus) (*framework.StatusReport, error) {
	if err := checkStatusReport(job, st); err != nil {
		return nil, err
	}
	return &framework.StatusReport{Conditions: st.Conditions, JobsStatus: st.JobsStatus, Restarts: st.Restarts, Nodes: st.Nodes}, nil
}

// checkStatusReport refuses a status that changes a field the host writes.
func checkStatusReport(job *trainer.TrainJob, st *trainer.TrainJobStatus) error {
	got, have := reflect.ValueOf(st).Elem(), reflect.ValueOf(&job.Status).Elem()
	var changed []string
	for i := range got.NumField() {
		f := got.Type().Field(i)
		if reportedStatusFields[f.Name] || got.Field(i).IsZero() {
			continue
		}
		// Compared as JSON, the form it crossed the wire in (an external
		// plugin's copy of the TrainJob's status was decoded from it).
		g, errG := json.Marshal(got.Field(i).Interface())
		h, errH := json.Marshal(have.Field(i).Interface())
		if errG != nil || errH != nil || !bytes.Equal(g, h) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			changed = append(changed, "status."+name)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return fmt.Errorf("the status sets %s, which the host writes; a status plugin reports status.conditions, status.jobsStatus, status.restarts and status.nodes: leave the others unset (or as the TrainJob has them)", strings.Join(changed, ", "))
}
