package statusserver

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

var received = time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)

func TestDecodeRequestWithoutCheckpointIsKubeflows(t *testing.T) {
	for body, want := range map[string]Request{
		`{}`: {},
		`{"trainerStatus":{"progressPercentage":45,"lastUpdatedTime":"2026-12-01T17:59:00Z"}}`: {TrainerStatus: &trainer.TrainerStatus{
			ProgressPercentage: ptr.To[int32](45), LastUpdatedTime: metav1.NewTime(received.Add(-time.Minute)),
		}},
		// Kubeflow Trainer ignores fields it does not know; so does this.
		`{"trainerStatus":{"progressPercentage":45,"epoch":3},"extra":1}`: {TrainerStatus: &trainer.TrainerStatus{ProgressPercentage: ptr.To[int32](45)}},
		`{"checkpoint":null}`: {},
	} {
		got, err := DecodeRequest([]byte(body), received)
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", body, diff)
		}
	}
}

func TestDecodeRequestTakesACheckpointAndARunStart(t *testing.T) {
	for body, want := range map[string]Request{
		`{"checkpoint":{"step":1200}}`: {Checkpoint: &trainer.CheckpointStatus{Step: 1200, Time: metav1.NewTime(received)}},
		`{"checkpoint":{"step":0,"path":"/checkpoints/step-0","time":"2026-12-01T17:58:30+01:00"}}`: {Checkpoint: &trainer.CheckpointStatus{
			Step: 0, Path: "/checkpoints/step-0", Time: metav1.NewTime(time.Date(2026, 12, 1, 16, 58, 30, 0, time.UTC)),
		}},
		`{"trainerStatus":{"progressPercentage":50},"checkpoint":{"step":9007199254740993,"path":null,"time":null}}`: {
			TrainerStatus: &trainer.TrainerStatus{ProgressPercentage: ptr.To[int32](50)},
			Checkpoint:    &trainer.CheckpointStatus{Step: 9007199254740993, Time: metav1.NewTime(received)},
		},
		`{"runStart":{"fromStep":0}}`: {RunStart: &trainer.RunStartStatus{FromStep: 0, Time: metav1.NewTime(received)}},
		`{"runStart":{"fromStep":40,"time":"2026-12-01T17:58:30Z"}}`: {RunStart: &trainer.RunStartStatus{
			FromStep: 40, Time: metav1.NewTime(time.Date(2026, 12, 1, 17, 58, 30, 0, time.UTC)),
		}},
		`{"runStart":null}`: {},
		`{"checkpoint":{"step":40},"runStart":{"fromStep":40,"time":null}}`: {
			Checkpoint: &trainer.CheckpointStatus{Step: 40, Time: metav1.NewTime(received)},
			RunStart:   &trainer.RunStartStatus{FromStep: 40, Time: metav1.NewTime(received)},
		},
	} {
		got, err := DecodeRequest([]byte(body), received)
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", body, diff)
		}
	}
}

// TestDecodeRequestNamesTheFieldAtFault: a checkpoint and a run start are
// Trainforge's own, so they are checked strictly, each error on its field.
func TestDecodeRequestNamesTheFieldAtFault(t *testing.T) {
	for body, want := range map[string]string{
		`{"checkpoint":{}}`:                                                    `checkpoint.step: Required value: the training step the checkpoint holds, an integer of 0 or more`,
		`{"checkpoint":{"path":"/ckpt"}}`:                                      `checkpoint.step: Required value`,
		`{"checkpoint":{"step":-1}}`:                                           `checkpoint.step: Invalid value: -1: must be 0 or more`,
		`{"checkpoint":{"step":1.5}}`:                                          `checkpoint.step: Invalid value: 1.5: must be an integer of 0 or more`,
		`{"checkpoint":{"step":"12"}}`:                                         `checkpoint.step: Invalid value: "12": must be a number, not a string`,
		`{"checkpoint":{"step":1,"path":5}}`:                                   `checkpoint.path: Invalid value: 5: must be a string`,
		`{"checkpoint":{"step":1,"time":"noon"}}`:                              `checkpoint.time: Invalid value: "noon": must be an RFC 3339 time`,
		`{"checkpoint":{"step":1,"time":17}}`:                                  `checkpoint.time: Invalid value: 17: must be an RFC 3339 time string`,
		`{"checkpoint":{"step":1,"stpe":2}}`:                                   `checkpoint: unknown field "stpe"; a checkpoint has step (required), path and time`,
		`{"checkpoint":{"step":1,"step":2}}`:                                   `checkpoint: duplicate field "step"`,
		`{"checkpoint":1200}`:                                                  `checkpoint: Invalid value: "1200": must be an object`,
		`{"checkpoint":[{"step":1}]}`:                                          `checkpoint: Invalid value: "[{\"step\":1}]": must be an object`,
		`{"checkpoint":{"step":1,"path":"` + strings.Repeat("a", 4097) + `"}}`: `checkpoint.path: Too long: may not be more than 4096 bytes`,
		`{"checkpoint":{"step":-1,"time":"noon"}}`:                             `[checkpoint.step: Invalid value: -1: must be 0 or more, checkpoint.time: Invalid value: "noon"`,
		`{"runStart":{}}`:                                                      `runStart.fromStep: Required value: the training step the run starts from (0 from nothing), an integer of 0 or more`,
		`{"runStart":{"fromStep":-2}}`:                                         `runStart.fromStep: Invalid value: -2: must be 0 or more`,
		`{"runStart":{"fromStep":"3"}}`:                                        `runStart.fromStep: Invalid value: "3": must be a number, not a string`,
		`{"runStart":{"fromStep":3,"time":"soon"}}`:                            `runStart.time: Invalid value: "soon": must be an RFC 3339 time`,
		`{"runStart":{"step":3}}`:                                              `runStart: unknown field "step"; a run start has fromStep (required) and time`,
		`{"runStart":true}`:                                                    `runStart: Invalid value: "true": must be an object: {"fromStep": <int>, "time": <RFC 3339>}`,
		`{"checkpoint":{"step":-1},"runStart":{}}`:                             `checkpoint.step: Invalid value: -1: must be 0 or more; runStart.fromStep: Required value`,
		`{"trainerStatus":{},"runStart":{"fromStep":1.5}}`:                     `runStart.fromStep: Invalid value: 1.5: must be an integer of 0 or more`,
	} {
		_, err := DecodeRequest([]byte(body), received)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.80s: error %v, want one containing %q", body, err, want)
		}
	}
}

func TestDecodeRequestRefusesJSONThatIsNot(t *testing.T) {
	if _, err := DecodeRequest([]byte(`{"trainerStatus":`), received); err == nil {
		t.Error("a body cut short was accepted")
	}
	if _, err := DecodeRequest([]byte(`{"trainerStatus":{"progressPercentage":"45"}}`), received); err == nil {
		t.Error("a progress of the wrong type was accepted")
	}
}
