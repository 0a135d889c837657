package frameworktest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trainforge/trainforge/framework/frameworktest"
)

func TestSeeds(t *testing.T) {
	want := []string{frameworktest.SeedCoscheduling, frameworktest.SeedPlainML, frameworktest.SeedTorch}
	if diff := cmp.Diff(want, frameworktest.SeedFiles()); diff != "" {
		t.Errorf("SeedFiles (-want +got):\n%s", diff)
	}
	cases := []struct {
		file, runtimeRef, job string
		numNodes              int32
	}{
		{frameworktest.SeedPlainML, "first-runtime", "first-job", 5},
		{frameworktest.SeedTorch, "torch-runtime", "first-job", 2},
		{frameworktest.SeedCoscheduling, "torch-gang", "gang-job", 10},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			spec, job := frameworktest.Seed(t, tc.file)
			if job.Name != tc.job || job.Spec.RuntimeRef.Name != tc.runtimeRef {
				t.Errorf("TrainJob %q of runtime %q, want %q of %q", job.Name, job.Spec.RuntimeRef.Name, tc.job, tc.runtimeRef)
			}
			if got := *spec.MLPolicy.NumNodes; got != tc.numNodes {
				t.Errorf("runtime numNodes %d, want %d", got, tc.numNodes)
			}
			if frameworktest.NewInfo(t, job, spec).TrainerPodSet() == nil {
				t.Error("no trainer PodSet")
			}
			// Every call decodes afresh.
			again, _ := frameworktest.Seed(t, tc.file)
			if again == spec || again.MLPolicy == spec.MLPolicy {
				t.Error("two calls share their result")
			}
		})
	}
}

// Fixtures in flow style: a runtime of the given kind whose one container
// has the given image, and a TrainJob of the given name.
const (
	runtimeDoc = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: %s
metadata: {name: rt}
spec:
  template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {containers: [{name: node, image: %s}]}}}}}]}}
`
	jobDoc = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: %s}
spec: {runtimeRef: {name: rt}}
`
)

func TestDecode(t *testing.T) {
	cases := []struct {
		name      string
		doc       string
		wantImage string // of the runtime; "" when the fixture has none
		wantJob   string // name of the TrainJob; "" when the fixture has none
	}{
		{name: "ClusterTrainingRuntime", doc: fmt.Sprintf(runtimeDoc, "ClusterTrainingRuntime", "a"), wantImage: "a"},
		{name: "TrainingRuntime", doc: fmt.Sprintf(runtimeDoc, "TrainingRuntime", "b"), wantImage: "b"},
		{
			name:      "bare spec",
			doc:       "template: {spec: {replicatedJobs: [{name: node, template: {spec: {template: {spec: {containers: [{name: node, image: c}]}}}}}]}}\n",
			wantImage: "c",
		},
		{name: "TrainJob", doc: fmt.Sprintf(jobDoc, "j"), wantJob: "j"},
		{name: "TrainJob without a kind", doc: "metadata:\n  name: k\n", wantJob: "k"},
		{
			name:      "runtime and TrainJob, empty documents and comments",
			doc:       "---\n# a comment\n" + fmt.Sprintf(runtimeDoc, "TrainingRuntime", "d") + "---\n" + fmt.Sprintf(jobDoc, "l") + "--- # the end\n",
			wantImage: "d",
			wantJob:   "l",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantImage != "" {
				spec := frameworktest.Runtime(t, tc.doc)
				if got := spec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Image; got != tc.wantImage {
					t.Errorf("runtime image %q, want %q", got, tc.wantImage)
				}
			} else if msg := fails(func(tb testing.TB) { frameworktest.Runtime(tb, tc.doc) }); msg == "" {
				t.Error("Runtime accepted a fixture without a runtime")
			}
			if tc.wantJob != "" {
				if got := frameworktest.TrainJob(t, tc.doc).Name; got != tc.wantJob {
					t.Errorf("TrainJob %q, want %q", got, tc.wantJob)
				}
			} else if msg := fails(func(tb testing.TB) { frameworktest.TrainJob(tb, tc.doc) }); msg == "" {
				t.Error("TrainJob accepted a fixture without a TrainJob")
			}
		})
	}
}

func TestDecodeFails(t *testing.T) {
	cases := []struct {
		name string
		call func(testing.TB)
		want string
	}{
		{
			name: "unknown field",
			call: func(tb testing.TB) {
				frameworktest.Runtime(tb, strings.Replace(fmt.Sprintf(runtimeDoc, "TrainingRuntime", "a"), "replicatedJobs:", "replicatedJob:", 1))
			},
			want: `unknown field "replicatedJob"`,
		},
		{
			name: "unknown field of a TrainJob",
			call: func(tb testing.TB) { frameworktest.TrainJob(tb, "metadata:\n  name: x\nspec:\n  runtime: rt\n") },
			want: `unknown field "runtime"`,
		},
		{
			name: "a full runtime without its kind is not a bare spec",
			call: func(tb testing.TB) {
				frameworktest.Runtime(tb, strings.Replace(fmt.Sprintf(runtimeDoc, "TrainingRuntime", "a"), "kind: TrainingRuntime\n", "", 1))
			},
			want: `unknown field "apiVersion"`,
		},
		{
			name: "two runtimes",
			call: func(tb testing.TB) {
				frameworktest.Runtime(tb, fmt.Sprintf(runtimeDoc, "TrainingRuntime", "a")+"---"+fmt.Sprintf(runtimeDoc, "ClusterTrainingRuntime", "b"))
			},
			want: "2 runtime documents",
		},
		{
			name: "a kind that is neither",
			call: func(tb testing.TB) {
				frameworktest.TrainJob(tb, fmt.Sprintf(jobDoc, "j")+"---"+strings.Replace(fmt.Sprintf(jobDoc, "x"), "TrainJob", "TrainJobs", 1))
			},
			want: `unexpected kind "TrainJobs"`,
		},
		{
			name: "a document without a kind among several",
			call: func(tb testing.TB) { frameworktest.TrainJob(tb, fmt.Sprintf(jobDoc, "j")+"---\nmetadata: {name: y}\n") },
			want: "a document without a kind",
		},
		{
			name: "no such seed",
			call: func(tb testing.TB) { frameworktest.Seed(tb, "seed-mpi.yaml") },
			want: `no seed example "seed-mpi.yaml" (there are seed-coscheduling.yaml, seed-plainml.yaml, seed-torch.yaml)`,
		},
		{
			name: "NewInfo error",
			call: func(tb testing.TB) {
				spec, job := frameworktest.Seed(tb, frameworktest.SeedPlainML)
				spec.Template.Spec.ReplicatedJobs[0].Name = "launcher"
				frameworktest.NewInfo(tb, job, spec)
			},
			want: "NewInfo: spec.trainer",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := fails(tc.call)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("failure %q, want one containing %q", msg, tc.want)
			}
		})
	}
}

// recorder is a testing.TB whose Fatal stops the calling goroutine and
// records the message.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fails runs call and returns the message with which it failed the test,
// "" when it did not.
func fails(call func(testing.TB)) string {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(r)
	}()
	<-done
	return r.msg
}

// examples/seed carries the seeds for users and `make demo`; they must not
// drift from the ones the tests embed.
func TestExamplesCarryTheSeeds(t *testing.T) {
	for _, f := range frameworktest.SeedFiles() {
		embedded, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		example, err := os.ReadFile(filepath.Join("..", "..", "examples", "seed", f))
		if err != nil {
			t.Fatalf("examples/seed lacks a seed: %v", err)
		}
		if string(example) != string(embedded) {
			t.Errorf("examples/seed/%s differs from framework/frameworktest/testdata/%s: copy one onto the other", f, f)
		}
	}
}
