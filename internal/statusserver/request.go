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

// The field managers of Trainforge's own status fields. Neither is
// FieldManager: each apply of one manager removes what it applied before
// and leaves out, so that a post without a checkpoint (or a run start),
// applied as FieldManager, would otherwise drop the last one.
const (
	CheckpointFieldManager = "trainforge-status-server-checkpoint"
	RunStartFieldManager   = "trainforge-status-server-run-start"
)

// Request is a decoded post: Kubeflow Trainer's trainerStatus, as
// Kubeflow Trainer decodes it, and Trainforge's optional checkpoint and
// run start, checked strictly.
type Request struct {
	TrainerStatus *trainer.TrainerStatus
	// Checkpoint is the checkpoint to record, its time filled in; nil
	// when the post reports none.
	Checkpoint *trainer.CheckpointStatus
	// RunStart is the run start to record, its time filled in; nil when
	// the post reports none.
	RunStart *trainer.RunStartStatus
}

// empty reports whether the post has nothing to apply.
func (r Request) empty() bool {
	return r.TrainerStatus == nil && r.Checkpoint == nil && r.RunStart == nil
}

// response is the body of a 200: what was applied, in the request's shape.
type response struct {
	TrainerStatus *trainer.TrainerStatus    `json:"trainerStatus,omitempty"`
	Checkpoint    *trainer.CheckpointStatus `json:"checkpoint,omitempty"`
	RunStart      *trainer.RunStartStatus   `json:"runStart,omitempty"`
}

// DecodeRequest decodes a post's body. trainerStatus is decoded as
// Kubeflow Trainer does (unknown fields are ignored, the API server checks
// the values); a checkpoint and a run start are checked here, strictly: an
// error names the field (checkpoint.step, runStart.fromStep, ...). One
// without a time gets now.
func DecodeRequest(body []byte, now time.Time) (Request, error) {
	var raw struct {
		TrainerStatus *trainer.TrainerStatus `json:"trainerStatus,omitempty"`
		Checkpoint    json.RawMessage        `json:"checkpoint,omitempty"`
		RunStart      json.RawMessage        `json:"runStart,omitempty"`
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&raw); err != nil {
		return Request{}, err
	}
	req := Request{TrainerStatus: raw.TrainerStatus}
	var errs []error
	cp, err := decodeCheckpoint(raw.Checkpoint, now)
	if err != nil {
		errs = append(errs, err)
	}
	run, err := decodeRunStart(raw.RunStart, now)
	if err != nil {
		errs = append(errs, err)
	}
	switch len(errs) {
	case 0:
	case 1:
		return Request{}, errs[0]
	default:
		return Request{}, fmt.Errorf("%w; %w", errs[0], errs[1])
	}
	req.Checkpoint, req.RunStart = cp, run
	return req, nil
}

// InvalidPayload is the message of a 422 for a body DecodeRequest refused.
func InvalidPayload(err error) string { return "Invalid payload: " + err.Error() }

// object is one of Trainforge's objects in a post, decoded strictly into
// fields (a struct of json.RawMessage); it reports whether there is one.
// shape is the object as an example, for a value that is no object, and
// known lists its fields, for an unknown one.
func object(root *field.Path, data json.RawMessage, fields any, shape, known string) (bool, error) {
	if len(data) == 0 || string(data) == "null" {
		return false, nil
	}
	if data[0] != '{' {
		return false, field.Invalid(root, string(data), "must be an object: "+shape)
	}
	strict, err := kjson.UnmarshalStrict(data, fields)
	if err != nil {
		return false, field.Invalid(root, string(data), err.Error())
	}
	if len(strict) > 0 {
		msgs := make([]string, 0, len(strict))
		for _, e := range strict {
			msgs = append(msgs, strings.TrimPrefix(e.Error(), "json: "))
		}
		return false, fmt.Errorf("%s: %s; %s", root, strings.Join(msgs, ", "), known)
	}
	return true, nil
}

func decodeCheckpoint(data json.RawMessage, now time.Time) (*trainer.CheckpointStatus, error) {
	root := field.NewPath("checkpoint")
	var in struct {
		Step json.RawMessage `json:"step"`
		Path json.RawMessage `json:"path"`
		Time json.RawMessage `json:"time"`
	}
	if ok, err := object(root, data, &in, `{"step": <int>, "path": <string>, "time": <RFC 3339>}`,
		"a checkpoint has step (required), path and time"); !ok {
		return nil, err
	}
	var errs field.ErrorList
	out := &trainer.CheckpointStatus{}
	out.Step = step(root.Child("step"), in.Step, "the training step the checkpoint holds", &errs)
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
	out.Time = timeOr(root.Child("time"), in.Time, now, &errs)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return out, nil
}

func decodeRunStart(data json.RawMessage, now time.Time) (*trainer.RunStartStatus, error) {
	root := field.NewPath("runStart")
	var in struct {
		FromStep json.RawMessage `json:"fromStep"`
		Time     json.RawMessage `json:"time"`
	}
	if ok, err := object(root, data, &in, `{"fromStep": <int>, "time": <RFC 3339>}`,
		"a run start has fromStep (required) and time"); !ok {
		return nil, err
	}
	var errs field.ErrorList
	out := &trainer.RunStartStatus{}
	out.FromStep = step(root.Child("fromStep"), in.FromStep, "the training step the run starts from (0 from nothing)", &errs)
	out.Time = timeOr(root.Child("time"), in.Time, now, &errs)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return out, nil
}

// step decodes a required training step, an integer of 0 or more; what
// says what it is, for a missing one.
func step(path *field.Path, raw json.RawMessage, what string, errs *field.ErrorList) int64 {
	s := string(raw)
	if s == "" || s == "null" {
		*errs = append(*errs, field.Required(path, what+", an integer of 0 or more"))
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case s[0] == '"':
		*errs = append(*errs, field.Invalid(path, shown(raw), "must be a number, not a string: an integer of 0 or more"))
	case err != nil:
		*errs = append(*errs, field.Invalid(path, shown(raw), "must be an integer of 0 or more"))
	case n < 0:
		*errs = append(*errs, field.Invalid(path, n, "must be 0 or more"))
	default:
		return n
	}
	return 0
}

// timeOr decodes an optional RFC 3339 time, now (to the second) when
// there is none.
func timeOr(path *field.Path, raw json.RawMessage, now time.Time, errs *field.ErrorList) metav1.Time {
	if len(raw) == 0 || string(raw) == "null" {
		return metav1.NewTime(now.UTC().Truncate(time.Second))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		*errs = append(*errs, field.Invalid(path, shown(raw), "must be an RFC 3339 time string, such as \"2026-12-01T18:00:00Z\""))
		return metav1.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		*errs = append(*errs, field.Invalid(path, s, "must be an RFC 3339 time, such as \"2026-12-01T18:00:00Z\""))
		return metav1.Time{}
	}
	return metav1.NewTime(t.UTC())
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
