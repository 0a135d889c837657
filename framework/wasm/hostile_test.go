package wasm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/framework/wasm/wasmtest"
)

const hostilePkg = "github.com/trainforge/trainforge/test/plugins/hostile"

// answerLabel is test/plugins/hostile's label that chooses its answer to a
// TrainJob.
const answerLabel = "hostile.test.trainforge.dev/answer"

// hostileJob is a TrainJob that asks the hostile plugin for answer, with
// a UID of its own.
func hostileJob(name, answer string) *trainer.TrainJob {
	job := testJob(name)
	job.UID = types.UID("uid-" + name)
	job.Labels = map[string]string{answerLabel: answer}
	return job
}

// hostileInfo is an Info with a trainer, whose policy the hostile plugin
// owns.
func hostileInfo() *framework.Info {
	info := testInfo()
	info.PodSets[0].AncestorStep = trainer.TrainerStep
	info.RuntimePolicy.MLPolicy = []byte(`{"hostile":{}}`)
	return info
}

// startHostile starts the hostile module with the configuration's default
// limits, a memory limit and a call timeout.
func startHostile(t *testing.T, memory int64, timeout time.Duration) (*Plugin, *logs) {
	t.Helper()
	m := wasmtest.Build(t, hostilePkg)
	opts, l := options(m, "Hostile")
	opts.CallTimeout = timeout
	opts.MemoryLimitBytes = memory
	opts.MaxMessageBytes = int(configv1alpha1.DefaultMaxMessageBytes)
	opts.Limits = remote.Limits{
		MaxMessageBytes:    int(configv1alpha1.DefaultMaxMessageBytes),
		MaxDepth:           int(configv1alpha1.DefaultMaxDepth),
		MaxObjects:         int(configv1alpha1.DefaultMaxObjects),
		MaxObjectBytes:     int(configv1alpha1.DefaultMaxObjectBytes),
		MaxPatchOperations: int(configv1alpha1.DefaultMaxPatchOperations),
	}
	return start(t, opts), l
}

// TestHostileModule runs each of the hostile plugin's bad answers, built
// as WebAssembly, through the framework under both failure policies: each
// is that call's error (Fail) or skipped with that error (Ignore), and a
// good call after it is answered, by a new instance when the bad one
// ended its instance. The second policy's call of the same TrainJob gets
// the answer of the first that ended its instance, without a call.
func TestHostileModule(t *testing.T) {
	cases := []struct {
		answer string
		memory int64 // the instance's memory limit
		point  framework.ExtensionPoint
		want   []string // what the call's error says
		ends   bool     // the call ends its instance
		// timeout is the call timeout: a minute, so that on a busy
		// machine a bad answer is refused for what it is, not its time;
		// 5s for the loop, which only its deadline ends.
		timeout time.Duration
	}{
		{answer: "loop", memory: 128 << 20, point: framework.PointBuild, ends: true, timeout: 5 * time.Second,
			want: []string{"no answer within callTimeout 5s", "interrupted at the call's deadline"}},
		{answer: "panic", memory: 128 << 20, point: framework.PointBuild, ends: true,
			want: []string{"the call: the module trapped", "it panicked: hostile: Build panics, as asked"}},
		{answer: "grow", memory: 128 << 20, point: framework.PointBuild, ends: true,
			want: []string{"the call: the module trapped", "it stopped with a fatal error: out of memory"}},
		{answer: "huge", memory: 512 << 20, point: framework.PointBuild,
			want: []string{"the answer has", "more than pluginHost.limits.maxMessageBytes 4194304"}},
		{answer: "malformed", memory: 128 << 20, point: framework.PointBuild,
			want: []string{"object 0 is not a Kubernetes object: the JSON is cut short"}},
		{answer: "patch", memory: 128 << 20, point: framework.PointEnforceMLPolicy,
			want: []string{"the answer has", "more than pluginHost.limits.maxMessageBytes 4194304"}},
	}
	for _, tc := range cases {
		t.Run(tc.answer, func(t *testing.T) {
			if tc.timeout == 0 {
				tc.timeout = time.Minute
			}
			p, logs := startHostile(t, tc.memory, tc.timeout)
			restarts := testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile"))
			for _, policy := range []frameworkruntime.FailurePolicy{frameworkruntime.FailurePolicyFail, frameworkruntime.FailurePolicyIgnore} {
				fw, err := frameworkruntime.New(context.Background(), framework.Registry{}, []frameworkruntime.PluginSpec{{Name: "Hostile", Plugin: p, FailurePolicy: policy}})
				if err != nil {
					t.Fatalf("frameworkruntime.New: %v", err)
				}
				set := fw.Current()
				run := func(answer string) (frameworkruntime.Ignored, error) {
					job := hostileJob("job-"+answer, answer)
					c, err := set.NewCycle(job, framework.PolicyKeys{ML: []string{"hostile"}})
					if err != nil {
						t.Fatalf("NewCycle: %v", err)
					}
					info := hostileInfo()
					if err := c.Enforce(context.Background(), info); err != nil || len(c.Ignored()) > 0 {
						return c.Ignored(), err
					}
					_, err = c.Build(context.Background(), info)
					return c.Ignored(), err
				}
				ignored, err := run(tc.answer)
				var perr *framework.PluginError
				switch policy {
				case frameworkruntime.FailurePolicyFail:
					if err == nil {
						t.Fatalf("Fail: the %s answer did not fail the call", tc.answer)
					}
					perr, _ = err.(*framework.PluginError)
				case frameworkruntime.FailurePolicyIgnore:
					if err != nil {
						t.Fatalf("Ignore: the %s answer failed the cycle: %v", tc.answer, err)
					}
					if len(ignored) != 1 {
						t.Fatalf("Ignore: ignored %v, want the %s answer's failure", ignored, tc.answer)
					}
					perr = ignored[0]
				}
				if perr == nil || perr.Plugin != "Hostile" || perr.Point != tc.point {
					t.Fatalf("%s: %v, want a failure of Hostile's %s", policy, err, tc.point)
				}
				for _, w := range tc.want {
					if !strings.Contains(perr.Error(), w) {
						t.Errorf("%s: the error does not say %q: %v\nlog:\n%s", policy, w, perr, logs)
					}
				}
				// The controller goes on: the next call is answered, once
				// the instance that replaces an ended one has started.
				waitIdle(t, p)
				if ignored, err := run("good"); err != nil || len(ignored) > 0 {
					t.Errorf("%s: a good call after the %s answer: %v %v", policy, tc.answer, err, ignored)
				}
			}
			if err := p.Ready(); err != nil {
				t.Errorf("Ready after the bad answers: %v", err)
			}
			// The first bad call ended its instance, or none did.
			want := 0.0
			if tc.ends {
				want = 1
			}
			if got := testutil.ToFloat64(frameworkruntime.PluginRestarts.WithLabelValues("Hostile")) - restarts; got != want {
				t.Errorf("trainforge_plugin_restarts_total{plugin=Hostile} grew by %v, want %v", got, want)
			}
		})
	}
}
