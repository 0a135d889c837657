// Command hostile is a Trainforge plugin that behaves well or badly on
// request, for the fault suite (test/faults). Its behaviour is written with
// the SDK (framework's Info.Trainer, UpsertEnv and ToObject, sdk.Logger) and served
// by the same gRPC server sdk.Serve uses (remote.NewServer); two of its
// answers (an object that is not JSON, a JSON Patch instead of the changed
// Info) are ones the SDK never produces, so a thin layer over that server
// makes them on the wire.
//
// It owns the mlPolicy key given by --ml-key (default hostile) and
// implements EnforceMLPolicy and Build. A good answer:
//
//   - EnforceMLPolicy sets HOSTILE=<name> on the trainer container;
//   - Build returns one ConfigMap <trainjob>-hostile (the only kind it
//     declares in Describe).
//
// Flags:
//
//	--name NAME     its name in Describe (default Hostile)
//	--ml-key KEY    the mlPolicy key it owns (default hostile)
//	--hang D        every EnforceMLPolicy and Build call from the first one
//	                on, for D, waits until D is over (or the call's deadline)
//	                and then answers well: a plugin that hangs, then recovers
//	--answer MODE   the answer to every TrainJob (default: the TrainJob's
//	                label hostile.test.trainforge.dev/answer, else good)
//
// Answers (MODE):
//
//	good        as above
//	malformed   Build returns an object that is not JSON
//	huge        Build returns a ConfigMap of about 50 MB
//	patch       EnforceMLPolicy answers a JSON Patch of 100,000 operations
//	            (adds of labels: about 4.8 MB) instead of the changed Info
//	undeclared  Build returns a Secret, a kind its Describe does not declare
//	loop        Build loops forever without looking at its deadline
//	panic       Build panics
//	grow        Build allocates memory until none is left
//
// The last three are for the plugin built as WebAssembly
// (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared), where the host
// must end them; as a binary, a loop or a growth runs until the host
// kills the process.
//
// Each bad answer is bad at one point only; the other point answers well.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
	"github.com/trainforge/trainforge/sdk"
)

// AnswerLabel on a TrainJob chooses the plugin's answer for it.
const AnswerLabel = "hostile.test.trainforge.dev/answer"

// The answers.
const (
	Good       = "good"
	Malformed  = "malformed"
	Huge       = "huge"
	Patch      = "patch"
	Undeclared = "undeclared"
	Loop       = "loop"
	Panic      = "panic"
	Grow       = "grow"
)

// EnvName is the variable a good EnforceMLPolicy sets.
const EnvName = "HOSTILE"

// Sizes of the bad answers.
const (
	hugeBytes  = 50 << 20
	patchOps   = 100_000
	configKind = "ConfigMap"
)

var configMapGVK = corev1.SchemeGroupVersion.WithKind(configKind)

func main() {
	h := &hostile{}
	flag.StringVar(&h.name, "name", "Hostile", "the plugin's name")
	flag.StringVar(&h.mlKey, "ml-key", "hostile", "the mlPolicy key it owns")
	flag.DurationVar(&h.hang, "hang", 0, "hang every call for this long from the first one on, then recover")
	flag.StringVar(&h.answer, "answer", "", "the answer to every TrainJob: good, malformed, huge, patch, undeclared, loop, panic or grow (default: the TrainJob's label "+AnswerLabel+")")
	flag.Parse()
	h.log = sdk.Logger().WithName(h.name)
	switch h.answer {
	case "", Good, Malformed, Huge, Patch, Undeclared, Loop, Panic, Grow:
	default:
		fmt.Fprintf(os.Stderr, "--answer %q: want good, malformed, huge, patch, undeclared, loop, panic or grow\n", h.answer)
		os.Exit(2)
	}
	serve(h)
}

// hostile is the plugin, written against framework/ and the SDK.
type hostile struct {
	name, mlKey, answer string
	hang                time.Duration
	log                 logr.Logger

	once    sync.Once
	hangEnd time.Time
}

func (h *hostile) Describe() framework.Description {
	return framework.Description{
		Name:         h.name,
		Version:      "v0.0.0-test",
		MLPolicyKeys: []string{h.mlKey},
		Builds:       []schema.GroupVersionKind{configMapGVK},
	}
}

// answerFor is the answer to job.
func (h *hostile) answerFor(labels map[string]string) string {
	if h.answer != "" {
		return h.answer
	}
	if a := labels[AnswerLabel]; a != "" {
		return a
	}
	return Good
}

// wait hangs the call while the hang lasts.
func (h *hostile) wait(ctx context.Context) error {
	if h.hang <= 0 {
		return nil
	}
	h.once.Do(func() {
		h.hangEnd = time.Now().Add(h.hang)
		h.log.Info("hanging every call", "for", h.hang.String())
	})
	d := time.Until(h.hangEnd)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *hostile) EnforceMLPolicy(ctx context.Context, info *framework.Info, job *trainer.TrainJob) error {
	if err := h.wait(ctx); err != nil {
		return err
	}
	_, c, err := info.Trainer()
	if err != nil {
		return err
	}
	c.UpsertEnv(corev1.EnvVar{Name: EnvName, Value: h.name})
	return nil
}

func (h *hostile) Build(ctx context.Context, info *framework.Info, job *trainer.TrainJob) ([]framework.Object, error) {
	if err := h.wait(ctx); err != nil {
		return nil, err
	}
	switch h.answerFor(job.Labels) {
	case Loop:
		h.log.Info("looping forever")
		for n := 0; ; n++ {
			spin = n
		}
	case Panic:
		panic("hostile: Build panics, as asked")
	case Grow:
		h.log.Info("growing until no memory is left")
		for {
			hoard = append(hoard, make([]byte, 1<<20))
			runtime.KeepAlive(hoard)
		}
	}
	if h.answerFor(job.Labels) == Undeclared {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-hostile"}, StringData: map[string]string{"a": "b"}}
		obj, err := framework.ToObject(info, s, corev1.SchemeGroupVersion.WithKind("Secret"))
		return framework.Apply(obj), err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-hostile"}, Data: map[string]string{"by": h.name}}
	obj, err := framework.ToObject(info, cm, configMapGVK)
	return framework.Apply(obj), err
}

// spin and hoard keep the loop's and the growth's work from being
// optimised away.
var (
	spin  int
	hoard [][]byte
)

// wire answers on the wire what the SDK would never send, and passes
// everything else to the SDK's server.
type wire struct {
	pluginv1.PluginServiceServer
	h *hostile

	hugeOnce, patchOnce sync.Once
	huge, patch         []byte
}

// jobLabels reads the labels of the TrainJob of a request.
func jobLabels(data []byte) map[string]string {
	var job struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &job)
	return job.Metadata.Labels
}

func (w *wire) EnforceMLPolicy(ctx context.Context, req *pluginv1.EnforceMLPolicyRequest) (*pluginv1.EnforceMLPolicyResponse, error) {
	if w.h.answerFor(jobLabels(req.GetTrainJob())) != Patch {
		return w.PluginServiceServer.EnforceMLPolicy(ctx, req)
	}
	if err := w.h.wait(ctx); err != nil {
		return nil, err
	}
	w.patchOnce.Do(func() {
		var b strings.Builder
		b.WriteString("[")
		for i := range patchOps {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"op":"add","path":"/labels/hostile-%d","value":"x"}`, i)
		}
		b.WriteString("]")
		w.patch = []byte(b.String())
	})
	return &pluginv1.EnforceMLPolicyResponse{Patch: w.patch}, nil
}

func (w *wire) Build(ctx context.Context, req *pluginv1.BuildRequest) (*pluginv1.BuildResponse, error) {
	switch w.h.answerFor(jobLabels(req.GetTrainJob())) {
	case Malformed:
		if err := w.h.wait(ctx); err != nil {
			return nil, err
		}
		return &pluginv1.BuildResponse{Objects: [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"half`)}}, nil
	case Huge:
		if err := w.h.wait(ctx); err != nil {
			return nil, err
		}
		w.hugeOnce.Do(func() {
			head := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge"},"data":{"blob":"`
			b := make([]byte, 0, hugeBytes+len(head)+3)
			b = append(b, head...)
			for len(b) < hugeBytes {
				b = append(b, 'x')
			}
			w.huge = append(b, `"}}`...)
		})
		return &pluginv1.BuildResponse{Objects: [][]byte{w.huge}}, nil
	}
	return w.PluginServiceServer.Build(ctx, req)
}
