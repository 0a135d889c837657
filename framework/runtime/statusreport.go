package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// reportedStatusFields are the fields of TrainJobStatus a status plugin
// reports, by their Go names; Cycle.Status merges these and nothing else.
// The others (runtimeSnapshot, trainerStatus, lastCheckpoint, ...) are
// written by the host: the controller and the status endpoint.
var reportedStatusFields = map[string]bool{"Conditions": true, "JobsStatus": true, "Restarts": true, "Nodes": true}

// checkStatusReport refuses a status that changes a field the host writes:
// the merge would drop it without a word. A plugin that returns a copy of
// the TrainJob's status with its own fields changed (the field the host
// writes as the TrainJob has it) passes.
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
