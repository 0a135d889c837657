package sdktest

import (
	"context"
	"fmt"
	"testing"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// recorder records whether the runner called its EnforceMLPolicy.
type recorder struct {
	desc   framework.Description
	called bool
}

func (r *recorder) Describe() framework.Description { return r.desc }

func (r *recorder) EnforceMLPolicy(context.Context, *framework.Info, *trainer.TrainJob) error {
	r.called = true
	return nil
}

// TestTakesPartAgreesWithTheRunner checks that takesPart, which Check and
// Golden use to decide whether to call a plugin for a case, decides as the
// framework's runner does.
func TestTakesPartAgreesWithTheRunner(t *testing.T) {
	descriptions := map[string]framework.Description{
		"no keys":                {},
		"torch":                  {MLPolicyKeys: []string{"torch"}},
		"no ML key":              {MLPolicyKeys: []string{framework.NoPolicyKey}},
		"any ML key":             {MLPolicyKeys: []string{framework.AnyPolicyKey}},
		"coscheduling":           {PodGroupPolicyKeys: []string{"coscheduling"}},
		"mpi and coscheduling":   {MLPolicyKeys: []string{"mpi"}, PodGroupPolicyKeys: []string{"coscheduling"}},
		"hello (a vendor key)":   {MLPolicyKeys: []string{"hello"}},
		"any pod-group key only": {PodGroupPolicyKeys: []string{framework.AnyPolicyKey}},
	}
	policies := map[string]string{
		"no policy":               "",
		"numNodes only":           "mlPolicy: {numNodes: 2}",
		"torch":                   "mlPolicy: {torch: {}}",
		"coscheduling":            "podGroupPolicy: {coscheduling: {}}",
		"torch and coscheduling":  "mlPolicy: {torch: {}}\npodGroupPolicy: {coscheduling: {}}",
		"hello (a vendor key)":    "mlPolicy: {hello: {}}",
		"mpi and a vendor pg key": "mlPolicy: {mpi: {}}\npodGroupPolicy: {kueue: {}}",
	}
	outcomes := map[bool]int{}
	job := frameworktest.TrainJob(t, "metadata: {name: j}\nspec: {runtimeRef: {name: r}}")
	for dname, desc := range descriptions {
		for pname, policy := range policies {
			t.Run(dname+" with "+pname, func(t *testing.T) {
				spec := frameworktest.Runtime(t, fmt.Sprintf(`
%s
template:
  spec:
    replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: busybox}]
`, policy))
				info := frameworktest.NewInfo(t, job, spec)
				want, err := takesPart(desc, info)
				if err != nil {
					t.Fatal(err)
				}
				outcomes[want]++

				desc.Name = "Recorder"
				rec := &recorder{desc: desc}
				// The stub owns every key literally, so that no key is
				// unowned and the runner's only question is whether
				// the recorder takes part.
				stub := &recorder{desc: framework.Description{Name: "Stub",
					MLPolicyKeys:       []string{framework.NoPolicyKey, "torch", "mpi", "hello"},
					PodGroupPolicyKeys: []string{"coscheduling", "kueue"}}}
				f, err := framework.New(context.Background(), nil, []framework.PluginSpec{
					{Name: "Stub", Plugin: stub}, {Name: "Recorder", Plugin: rec},
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Enforce(context.Background(), info, job); err != nil {
					t.Fatal(err)
				}
				if rec.called != want {
					t.Errorf("takesPart = %v, but the runner called the plugin: %v", want, rec.called)
				}
			})
		}
	}
	if outcomes[true] == 0 || outcomes[false] == 0 {
		t.Errorf("the table reaches only one outcome: %v", outcomes)
	}
}
