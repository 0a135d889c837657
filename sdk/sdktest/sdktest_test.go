package sdktest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trainforge/trainforge/sdk/sdktest"
)

func TestCaseFromFilesReadsTwoFiles(t *testing.T) {
	dir := t.TempDir()
	runtime := filepath.Join(dir, "runtime.yaml")
	job := filepath.Join(dir, "job.yaml")
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(runtime, `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: rt
  namespace: team-a
spec:
  mlPolicy:
    numNodes: 3
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers: [{name: node, image: busybox}]
`)
	write(job, `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: j
  namespace: team-a
spec:
  runtimeRef:
    name: rt
    kind: TrainingRuntime
`)
	c := sdktest.CaseFromFiles(t, "two-files", runtime, job)
	if c.Name != "two-files" || c.Args != nil {
		t.Errorf("case = %q with args %s, want \"two-files\" without args", c.Name, c.Args)
	}
	if c.Runtime == nil || c.Runtime.MLPolicy == nil || c.Runtime.MLPolicy.NumNodes == nil || *c.Runtime.MLPolicy.NumNodes != 3 {
		t.Errorf("runtime = %+v, want the TrainingRuntime's spec with numNodes 3", c.Runtime)
	}
	if c.Job == nil || c.Job.Name != "j" || c.Job.Namespace != "team-a" {
		t.Errorf("job = %+v, want team-a/j", c.Job)
	}
}
