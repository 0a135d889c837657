package sdktest_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/trainforge/trainforge/framework"
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

func TestDefaultCases(t *testing.T) {
	cases := sdktest.DefaultCases(hello{}.Describe())
	var names []string
	for _, c := range cases {
		names = append(names, c.Name)
	}
	if want := []string{"mlpolicy-hello", "mlpolicy-hello-4-nodes-2-gpus"}; !slices.Equal(names, want) {
		t.Fatalf("DefaultCases named %v, want %v", names, want)
	}
	if keys := cases[0].Runtime.MLPolicy.Keys(); !slices.Equal(keys, []string{"hello"}) {
		t.Errorf("the runtime sets the mlPolicy keys %v, want the plugin's key", keys)
	}
	// The cases are ones the plugin takes part in, and its properties hold.
	sdktest.Check(t, hello{}, cases...)

	plain := sdktest.DefaultCases(framework.Description{Name: "Sidecar"})
	if len(plain) != 2 || plain[0].Name != "no-policy-key" || plain[0].Runtime.MLPolicy != nil {
		t.Errorf("DefaultCases of a plugin that owns no key = %+v, want two cases without a policy key", plain)
	}
	gang := sdktest.DefaultCases(framework.Description{Name: "Gang", PodGroupPolicyKeys: []string{"volcano"}})
	if len(gang) != 2 || gang[0].Name != "podgrouppolicy-volcano" || gang[0].Runtime.PodGroupPolicy.Volcano == nil {
		t.Errorf("DefaultCases of a gang plugin = %+v, want a runtime that sets podGroupPolicy.volcano", gang)
	}
}
