package sdktest

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

// LoadCase reads a case from YAML files, as CaseFromFiles does, and
// returns an error instead of failing a test: runtimeFile holds a
// TrainingRuntime or a ClusterTrainingRuntime, jobFile a TrainJob; they may
// be the same file, holding both documents separated by "---". Decoding is
// strict: an unknown field is an error that names it.
func LoadCase(name, runtimeFile, jobFile string) (Case, error) {
	read := func(file string) (string, error) {
		data, err := os.ReadFile(file)
		return string(data), err
	}
	text, err := read(runtimeFile)
	if err != nil {
		return Case{}, err
	}
	spec, err := frameworktest.ParseRuntime(text)
	if err != nil {
		return Case{}, fmt.Errorf("%s: %w", runtimeFile, err)
	}
	if jobFile != runtimeFile {
		if text, err = read(jobFile); err != nil {
			return Case{}, err
		}
	}
	job, err := frameworktest.ParseTrainJob(text)
	if err != nil {
		return Case{}, fmt.Errorf("%s: %w", jobFile, err)
	}
	return Case{Name: name, Runtime: spec, Job: job}, nil
}

// DefaultCases returns cases for a plugin of the given description, for a
// plugin that has no cases of its own yet: for each policy key it owns, a
// runtime that sets that key to {} (and for a plugin that owns no key, or
// "" or "*", a runtime that sets none), with one trainer replicatedJob
// "node", and two TrainJobs using it: one that overrides nothing, and one
// with 4 nodes of 2 GPUs each and an env var. A plugin whose key needs more
// than {} (or more replicatedJobs) needs cases of its own.
func DefaultCases(d framework.Description) []Case {
	type policy struct{ field, key string }
	var policies []policy
	for _, k := range d.MLPolicyKeys {
		policies = append(policies, policy{"mlPolicy", k})
	}
	for _, k := range d.PodGroupPolicyKeys {
		policies = append(policies, policy{"podGroupPolicy", k})
	}
	if len(policies) == 0 {
		policies = append(policies, policy{"", ""})
	}
	var out []Case
	seen := map[string]bool{}
	for _, p := range policies {
		name := "no-policy-key"
		spec := defaultRuntime()
		if p.key != framework.NoPolicyKey && p.key != framework.AnyPolicyKey {
			name = strings.ToLower(p.field) + "-" + caseNameUnsafe.ReplaceAllString(p.key, "-")
			raw := json.RawMessage(fmt.Sprintf(`{%q: {}}`, p.key))
			var err error
			if p.field == "mlPolicy" {
				spec.MLPolicy = &trainer.MLPolicy{}
				err = json.Unmarshal(raw, spec.MLPolicy)
			} else {
				spec.PodGroupPolicy = &trainer.PodGroupPolicy{}
				err = json.Unmarshal(raw, spec.PodGroupPolicy)
			}
			if err != nil {
				// The policy types keep any key; a key whose typed form is
				// not an object cannot take {}.
				continue
			}
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out,
			Case{Name: name, Runtime: spec, Job: defaultJob(name, nil)},
			Case{Name: name + "-4-nodes-2-gpus", Runtime: spec, Job: defaultJob(name, &trainer.Trainer{
				NumNodes: ptr.To[int32](4),
				Env:      []corev1.EnvVar{{Name: "LEARNING_RATE", Value: "0.01"}},
				ResourcesPerNode: &corev1.ResourceRequirements{Limits: corev1.ResourceList{
					"nvidia.com/gpu": resource.MustParse("2"), corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
				}},
			})},
		)
	}
	return out
}

var caseNameUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func defaultRuntime() *trainer.TrainingRuntimeSpec {
	spec := &trainer.TrainingRuntimeSpec{}
	spec.Template.Spec.ReplicatedJobs = make([]jobsetv1alpha2.ReplicatedJob, 1)
	rj := &spec.Template.Spec.ReplicatedJobs[0]
	rj.Name = trainer.TrainerContainerName
	rj.Replicas = 1
	rj.Template.Labels = map[string]string{trainer.AncestorStepLabel: trainer.TrainerStep}
	rj.Template.Spec.Template.Spec.Containers = []corev1.Container{{
		Name: trainer.TrainerContainerName, Image: "registry.example/trainer:v1", Command: []string{"python", "train.py"},
	}}
	return spec
}

func defaultJob(runtime string, t *trainer.Trainer) *trainer.TrainJob {
	return &trainer.TrainJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind},
		ObjectMeta: metav1.ObjectMeta{Name: "conformance", Namespace: "team-a", UID: "00000000-0000-0000-0000-000000000001"},
		Spec:       trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: runtime}, Trainer: t},
	}
}
