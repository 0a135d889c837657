package statusserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// CheckpointFieldManager is the field manager of status.lastCheckpoint. It
// is not FieldManager: each apply of one manager removes what it applied
// before and leaves out, so that a post without a checkpoint, applied as
// FieldManager, would otherwise drop the last checkpoint.
const CheckpointFieldManager = "trainforge-status-server-checkpoint"

// Request is a decoded post: Kubeflow Trainer's trainerStatus, as
// Kubeflow Trainer decodes it, and Trainforge's optional checkpoint,
// checked strictly.
type Request struct {
	TrainerStatus *trainer.TrainerStatus
	// Checkpoint is the checkpoint to record, its time filled in; nil
	// when the post reports none.
	Checkpoint *trainer.CheckpointStatus
}

// response is the body of a 200: what was applied, in the request's shape.
type response struct {
	TrainerStatus *trainer.TrainerStatus    `json:"trainerStatus,omitempty"`
	Checkpoint    *trainer.CheckpointStatus `json:"checkpoint,omitempty"`
}

// DecodeRequest decodes a post's body. trainerStatus is decoded as
// Kubeflow Trainer does (unknown fields are ignored, the API server checks
// the values); a checkpoint is checked here, strictly: an error names the
// field (checkpoint.step, ...). A checkpoint without a time gets now.
func DecodeRequest(body []byte, now time.Time) (Request, error) {
	var raw struct {
		TrainerStatus *trainer.TrainerStatus `json:"trainerStatus,omitempty"`
		Checkpoint    json.RawMessage        `json:"checkpoint,omitempty"`
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&raw); err != nil {
		return Request{}, err
	}
	req := Request{TrainerStatus: raw.TrainerStatus}
	cp, err := decodeCheckpoint(raw.Checkpoint, now)
	if err != nil {
		return Request{}, err
	}
	req.Checkpoint = cp
	return req, nil
}

// InvalidPayload is the message of a 422 for a body DecodeRequest refused.
func InvalidPayload(err error) string { return "Invalid payload: " + err.Error() }

// checkpointFields are the fields a checkpoint has, for the message of an
// unknown one.
const checkpointFields = "a checkpoint has step (required), path and time"

func decodeCheckpoint(data json.RawMessage, now time.Time) (*trainer.CheckpointStatus, error) {
	root := field.NewPath("checkpoint")
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	if data[0] != '{' {
		return nil, field.Invalid(root, string(data), "must be an object: {\"step\": <int>, \"path\": <string>, \"time\": <RFC 3339>}")
	}
	var in struct {
		Step json.RawMessage `json:"step"`
		Path json.RawMessage `json:"path"`
		Time json.RawMessage `json:"time"`
	}
	strict, err := kjson.UnmarshalStrict(data, &in)
	if err != nil {
		return nil, field.Invalid(root, string(data), err.Error())
	}
	if len(strict) > 0 {
		msgs := make([]string, 0, len(strict))
		for _, e := range strict {
			msgs = append(msgs, strings.TrimPrefix(e.Error(), "json: "))
		}
		return nil, fmt.Errorf("%s: %s; %s", root, strings.Join(msgs, ", "), checkpointFields)
	}
	var errs field.ErrorList
	out := &trainer.CheckpointStatus{}
	switch step := string(in.Step); {
	case step == "" || step == "null":
		errs = append(errs, field.Required(root.Child("step"), "the training step the checkpoint holds, an integer of 0 or more"))
	default:
		n, err := strconv.ParseInt(step, 10, 64)
		switch {
		case step[0] == '"':
			errs = append(errs, field.Invalid(root.Child("step"), shown(in.Step), "must be a number, not a string: an integer of 0 or more"))
		case err != nil:
			errs = append(errs, field.Invalid(root.Child("step"), shown(in.Step), "must be an integer of 0 or more"))
		case n < 0:
			errs = append(errs, field.Invalid(root.Child("step"), n, "must be 0 or more"))
		default:
			out.Step = n
		}
	}
	if len(in.Path) > 0 && string(in.Path) != "null" {
		var path string
		switch err := json.Unmarshal(in.Path, &path); {
		case err != nil:
			errs = append(errs, field.Invalid(root.Child("path"), shown(in.Path), "must be a string"))
		case len(path) > trainer.MaxCheckpointPathLength:
			errs = append(errs, field.TooLong(root.Child("path"), "", trainer.MaxCheckpointPathLength))
		case !utf8.ValidString(path) || strings.ContainsRune(path, 0):
			errs = append(errs, field.Invalid(root.Child("path"), path, "must be UTF-8 text without NUL"))
		default:
			out.Path = path
		}
	}
	out.Time = metav1.NewTime(now.UTC().Truncate(time.Second))
	if len(in.Time) > 0 && string(in.Time) != "null" {
		var s string
		if err := json.Unmarshal(in.Time, &s); err != nil {
			errs = append(errs, field.Invalid(root.Child("time"), shown(in.Time), "must be an RFC 3339 time string, such as \"2026-12-01T18:00:00Z\""))
		} else if t, err := time.Parse(time.RFC3339, s); err != nil {
			errs = append(errs, field.Invalid(root.Child("time"), s, "must be an RFC 3339 time, such as \"2026-12-01T18:00:00Z\""))
		} else {
			out.Time = metav1.NewTime(t.UTC())
		}
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return out, nil
}

// shown is a JSON value as a field error shows it: a number as a number,
// anything else as its JSON text.
func shown(raw json.RawMessage) any {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil && raw[0] != '"' {
		return n
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}
