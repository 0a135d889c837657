package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// semantic decodes a JSON document into generic values, so that two
// documents compare equal whatever their key order and spacing.
func semantic(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", data, err)
	}
	return v
}

// extraJSON turns Extra into strings so that diffs are readable and raw
// bytes compare semantically.
func extraJSON(t *testing.T, extra map[string]apiextensionsv1.JSON) map[string]any {
	t.Helper()
	if extra == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range extra {
		out[k] = semantic(t, v.Raw)
	}
	return out
}

func TestMLPolicyJSONRoundTrip(t *testing.T) {
	cases := []struct {
		name      string
		in        string
		want      MLPolicy // without Extra
		wantExtra map[string]any
		wantKeys  []string
		wantOut   string // semantically; empty means the input
	}{
		{
			name: "typed and vendor keys",
			in:   `{"numNodes":2,"torch":{"numProcPerNode":"auto"},"deepspeed":{"stage":3}}`,
			want: MLPolicy{
				NumNodes:       ptr.To[int32](2),
				MLPolicySource: MLPolicySource{Torch: &TorchMLPolicySource{NumProcPerNode: ptr.To(intstr.FromString("auto"))}},
			},
			wantExtra: map[string]any{"deepspeed": map[string]any{"stage": float64(3)}},
			wantKeys:  []string{"deepspeed", "torch"},
		},
		{
			name: "torch with Kubeflow's envInjection",
			in:   `{"torch":{"envInjection":{"targets":[{"jobName":"node","containerNames":["wait","metrics"]}]}}}`,
			want: MLPolicy{MLPolicySource: MLPolicySource{Torch: &TorchMLPolicySource{EnvInjection: &EnvInjection{
				Targets: []EnvInjectionTarget{{JobName: "node", ContainerNames: []string{"wait", "metrics"}}},
			}}}},
			wantKeys: []string{"torch"},
		},
		{
			name:    "empty object",
			in:      `{}`,
			wantOut: `{}`,
		},
		{
			name:    "null",
			in:      `null`,
			wantOut: `{}`,
		},
		{
			name:     "numNodes alone is no framework key",
			in:       `{"numNodes":5}`,
			want:     MLPolicy{NumNodes: ptr.To[int32](5)},
			wantKeys: nil,
		},
		{
			name: "empty typed keys survive",
			in:   `{"torch":{},"mpi":{},"jax":{},"xgboost":{},"flux":{}}`,
			want: MLPolicy{MLPolicySource: MLPolicySource{
				Torch: &TorchMLPolicySource{}, MPI: &MPIMLPolicySource{}, JAX: &JAXMLPolicySource{}, XGBoost: &XGBoostMLPolicySource{},
				Flux: &FluxMLPolicySource{},
			}},
			wantKeys: []string{"flux", "jax", "mpi", "torch", "xgboost"},
		},
		{
			name:      "flux is typed, a vendor key beside it stays extra",
			in:        `{"flux":{"numProcPerNode":4},"hpc":{"queue":"batch"}}`,
			want:      MLPolicy{MLPolicySource: MLPolicySource{Flux: &FluxMLPolicySource{NumProcPerNode: ptr.To[int32](4)}}},
			wantExtra: map[string]any{"hpc": map[string]any{"queue": "batch"}},
			wantKeys:  []string{"flux", "hpc"},
		},
		{
			name: "several vendor keys of every JSON type",
			in:   `{"torch":{"numProcPerNode":4},"zeta":[1,"a"],"alpha":"s","beta":null,"gamma":true,"delta":{"nested":{"deep":[{}]}}}`,
			want: MLPolicy{MLPolicySource: MLPolicySource{Torch: &TorchMLPolicySource{NumProcPerNode: ptr.To(intstr.FromInt32(4))}}},
			wantExtra: map[string]any{
				"zeta":  []any{float64(1), "a"},
				"alpha": "s",
				"beta":  nil,
				"gamma": true,
				"delta": map[string]any{"nested": map[string]any{"deep": []any{map[string]any{}}}},
			},
			wantKeys: []string{"alpha", "beta", "delta", "gamma", "torch", "zeta"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p MLPolicy
			if err := json.Unmarshal([]byte(tc.in), &p); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(tc.wantExtra, extraJSON(t, p.Extra)); diff != "" {
				t.Errorf("Extra (-want +got):\n%s", diff)
			}
			typed := p
			typed.Extra = nil
			if diff := cmp.Diff(tc.want, typed); diff != "" {
				t.Errorf("typed fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantKeys, p.Keys()); diff != "" {
				t.Errorf("Keys() (-want +got):\n%s", diff)
			}
			out, err := json.Marshal(p)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			wantOut := tc.wantOut
			if wantOut == "" {
				wantOut = tc.in
			}
			if diff := cmp.Diff(semantic(t, []byte(wantOut)), semantic(t, out)); diff != "" {
				t.Errorf("re-encoded %s (-want +got):\n%s", out, diff)
			}
			// A second round trip is stable.
			var again MLPolicy
			if err := json.Unmarshal(out, &again); err != nil {
				t.Fatalf("second Unmarshal: %v", err)
			}
			out2, err := json.Marshal(again)
			if err != nil {
				t.Fatalf("second Marshal: %v", err)
			}
			if diff := cmp.Diff(string(out), string(out2)); diff != "" {
				t.Errorf("second round trip (-first +second):\n%s", diff)
			}
		})
	}
}

func TestPodGroupPolicyJSONRoundTrip(t *testing.T) {
	cases := []struct {
		name      string
		in        string
		want      PodGroupPolicy
		wantExtra map[string]any
		wantKeys  []string
		wantOut   string
	}{
		{
			name: "typed and vendor keys",
			in:   `{"coscheduling":{"scheduleTimeoutSeconds":30},"kai":{"queue":"team-a"}}`,
			want: PodGroupPolicy{PodGroupPolicySource: PodGroupPolicySource{
				Coscheduling: &CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](30)},
			}},
			wantExtra: map[string]any{"kai": map[string]any{"queue": "team-a"}},
			wantKeys:  []string{"coscheduling", "kai"},
		},
		{
			name:     "empty coscheduling survives",
			in:       `{"coscheduling":{}}`,
			want:     PodGroupPolicy{PodGroupPolicySource: PodGroupPolicySource{Coscheduling: &CoschedulingPodGroupPolicySource{}}},
			wantKeys: []string{"coscheduling"},
		},
		{
			name: "volcano keeps its raw network topology",
			in:   `{"volcano":{"networkTopology":{"mode":"hard","highestTierAllowed":1}}}`,
			want: PodGroupPolicy{PodGroupPolicySource: PodGroupPolicySource{
				Volcano: &VolcanoPodGroupPolicySource{NetworkTopology: &apiextensionsv1.JSON{Raw: []byte(`{"mode":"hard","highestTierAllowed":1}`)}},
			}},
			wantKeys: []string{"volcano"},
		},
		{name: "empty object", in: `{}`, wantOut: `{}`},
		{name: "null", in: `null`, wantOut: `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p PodGroupPolicy
			if err := json.Unmarshal([]byte(tc.in), &p); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(tc.wantExtra, extraJSON(t, p.Extra)); diff != "" {
				t.Errorf("Extra (-want +got):\n%s", diff)
			}
			typed := p
			typed.Extra = nil
			if diff := cmp.Diff(tc.want, typed); diff != "" {
				t.Errorf("typed fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantKeys, p.Keys()); diff != "" {
				t.Errorf("Keys() (-want +got):\n%s", diff)
			}
			out, err := json.Marshal(p)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			wantOut := tc.wantOut
			if wantOut == "" {
				wantOut = tc.in
			}
			if diff := cmp.Diff(semantic(t, []byte(wantOut)), semantic(t, out)); diff != "" {
				t.Errorf("re-encoded %s (-want +got):\n%s", out, diff)
			}
		})
	}
}

func TestPolicyDecodeErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		into any
	}{
		{name: "mlPolicy typed key of the wrong type", in: `{"torch":"yes"}`, into: &MLPolicy{}},
		{name: "mlPolicy numNodes of the wrong type", in: `{"numNodes":"two"}`, into: &MLPolicy{}},
		{name: "mlPolicy not an object", in: `[1,2]`, into: &MLPolicy{}},
		{name: "podGroupPolicy typed key of the wrong type", in: `{"coscheduling":[]}`, into: &PodGroupPolicy{}},
		{name: "podGroupPolicy not an object", in: `"coscheduling"`, into: &PodGroupPolicy{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := json.Unmarshal([]byte(tc.in), tc.into); err == nil {
				t.Errorf("Unmarshal(%s) succeeded, want an error", tc.in)
			}
		})
	}
}

func TestPolicyMarshalRejectsExtraShadowingTypedKey(t *testing.T) {
	cases := []struct {
		name string
		v    any
	}{
		{name: "mlPolicy torch", v: MLPolicy{Extra: map[string]apiextensionsv1.JSON{"torch": {Raw: []byte(`{}`)}}}},
		{name: "mlPolicy numNodes", v: MLPolicy{Extra: map[string]apiextensionsv1.JSON{"numNodes": {Raw: []byte(`3`)}}}},
		{name: "podGroupPolicy coscheduling", v: PodGroupPolicy{Extra: map[string]apiextensionsv1.JSON{"coscheduling": {Raw: []byte(`{}`)}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := json.Marshal(tc.v)
			if err == nil || !strings.Contains(err.Error(), "shadows a typed key") {
				t.Errorf("Marshal error = %v, want one saying the extra key shadows a typed key", err)
			}
		})
	}
}

func TestPolicyMarshalEmptyExtraRawIsNull(t *testing.T) {
	out, err := json.Marshal(MLPolicy{Extra: map[string]apiextensionsv1.JSON{"deepspeed": {}}})
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if diff := cmp.Diff(semantic(t, []byte(`{"deepspeed":null}`)), semantic(t, out)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
}

func TestPolicyKeys(t *testing.T) {
	raw := func(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }
	mlCases := []struct {
		name string
		p    *MLPolicy
		want []string
	}{
		{name: "nil", p: nil, want: nil},
		{name: "empty", p: &MLPolicy{}, want: nil},
		{name: "numNodes only", p: &MLPolicy{NumNodes: ptr.To[int32](3)}, want: nil},
		{name: "torch", p: &MLPolicy{MLPolicySource: MLPolicySource{Torch: &TorchMLPolicySource{}}}, want: []string{"torch"}},
		{
			name: "typed and extra, sorted",
			p: &MLPolicy{
				MLPolicySource: MLPolicySource{XGBoost: &XGBoostMLPolicySource{}, MPI: &MPIMLPolicySource{}},
				Extra:          map[string]apiextensionsv1.JSON{"zz": raw(`1`), "deepspeed": raw(`{}`), "aa": raw(`{}`)},
			},
			want: []string{"aa", "deepspeed", "mpi", "xgboost", "zz"},
		},
	}
	for _, tc := range mlCases {
		t.Run("mlPolicy "+tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.p.Keys()); diff != "" {
				t.Errorf("Keys() (-want +got):\n%s", diff)
			}
		})
	}
	pgCases := []struct {
		name string
		p    *PodGroupPolicy
		want []string
	}{
		{name: "nil", p: nil, want: nil},
		{name: "empty", p: &PodGroupPolicy{}, want: nil},
		{
			name: "typed and extra, sorted",
			p: &PodGroupPolicy{
				PodGroupPolicySource: PodGroupPolicySource{Volcano: &VolcanoPodGroupPolicySource{}, Coscheduling: &CoschedulingPodGroupPolicySource{}},
				Extra:                map[string]apiextensionsv1.JSON{"kai": raw(`{}`), "yunikorn": raw(`{}`)},
			},
			want: []string{"coscheduling", "kai", "volcano", "yunikorn"},
		},
	}
	for _, tc := range pgCases {
		t.Run("podGroupPolicy "+tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.p.Keys()); diff != "" {
				t.Errorf("Keys() (-want +got):\n%s", diff)
			}
		})
	}
}

const vendorRuntimeYAML = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: deepspeed-runtime
  namespace: team-a
spec:
  mlPolicy:
    numNodes: 4
    deepspeed:
      stage: 3
      offload:
        optimizer: cpu
  podGroupPolicy:
    kai:
      queue: research
      priority: high
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: deepspeed/deepspeed
`

// TestTrainingRuntimeYAMLKeepsVendorKeys is the DESIGN §9 pitfall: a
// runtime decoded from YAML keeps mlPolicy.deepspeed and podGroupPolicy.kai
// and writes them back out.
func TestTrainingRuntimeYAMLKeepsVendorKeys(t *testing.T) {
	decoders := map[string]func([]byte, any) error{
		"Unmarshal": func(b []byte, v any) error { return yaml.Unmarshal(b, v) },
		"UnmarshalStrict": func(b []byte, v any) error {
			return yaml.UnmarshalStrict(b, v)
		},
	}
	for name, decode := range decoders {
		t.Run(name, func(t *testing.T) {
			var rt TrainingRuntime
			if err := decode([]byte(vendorRuntimeYAML), &rt); err != nil {
				t.Fatalf("decoding the runtime: %v", err)
			}
			ml, pg := rt.Spec.MLPolicy, rt.Spec.PodGroupPolicy
			if ml == nil || pg == nil {
				t.Fatalf("mlPolicy = %v, podGroupPolicy = %v; want both set", ml, pg)
			}
			if diff := cmp.Diff(ptr.To[int32](4), ml.NumNodes); diff != "" {
				t.Errorf("mlPolicy.numNodes (-want +got):\n%s", diff)
			}
			wantML := map[string]any{"deepspeed": map[string]any{"stage": float64(3), "offload": map[string]any{"optimizer": "cpu"}}}
			if diff := cmp.Diff(wantML, extraJSON(t, ml.Extra)); diff != "" {
				t.Errorf("mlPolicy.Extra (-want +got):\n%s", diff)
			}
			wantPG := map[string]any{"kai": map[string]any{"queue": "research", "priority": "high"}}
			if diff := cmp.Diff(wantPG, extraJSON(t, pg.Extra)); diff != "" {
				t.Errorf("podGroupPolicy.Extra (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"deepspeed"}, ml.Keys()); diff != "" {
				t.Errorf("mlPolicy.Keys() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"kai"}, pg.Keys()); diff != "" {
				t.Errorf("podGroupPolicy.Keys() (-want +got):\n%s", diff)
			}

			// Written back out, the vendor keys are still there.
			out, err := json.Marshal(rt.Spec)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			var back struct {
				MLPolicy       map[string]any `json:"mlPolicy"`
				PodGroupPolicy map[string]any `json:"podGroupPolicy"`
			}
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("Unmarshal of %s: %v", out, err)
			}
			wantBackML := map[string]any{"numNodes": float64(4), "deepspeed": wantML["deepspeed"]}
			if diff := cmp.Diff(wantBackML, back.MLPolicy); diff != "" {
				t.Errorf("re-encoded mlPolicy (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantPG, back.PodGroupPolicy); diff != "" {
				t.Errorf("re-encoded podGroupPolicy (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTrainingRuntimeUnstructuredKeepsVendorKeys covers the path that
// controller-runtime clients (and fake clients) take: typed ↔ unstructured.
func TestTrainingRuntimeUnstructuredKeepsVendorKeys(t *testing.T) {
	var rt TrainingRuntime
	if err := yaml.Unmarshal([]byte(vendorRuntimeYAML), &rt); err != nil {
		t.Fatalf("decoding the runtime: %v", err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&rt)
	if err != nil {
		t.Fatalf("ToUnstructured: %v", err)
	}
	spec, _ := u["spec"].(map[string]any)
	wantML := map[string]any{"numNodes": int64(4), "deepspeed": map[string]any{"stage": int64(3), "offload": map[string]any{"optimizer": "cpu"}}}
	if diff := cmp.Diff(wantML, spec["mlPolicy"]); diff != "" {
		t.Errorf("unstructured spec.mlPolicy (-want +got):\n%s", diff)
	}
	var back TrainingRuntime
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &back); err != nil {
		t.Fatalf("FromUnstructured: %v", err)
	}
	if diff := cmp.Diff(extraJSON(t, rt.Spec.MLPolicy.Extra), extraJSON(t, back.Spec.MLPolicy.Extra)); diff != "" {
		t.Errorf("mlPolicy.Extra after FromUnstructured (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(extraJSON(t, rt.Spec.PodGroupPolicy.Extra), extraJSON(t, back.Spec.PodGroupPolicy.Extra)); diff != "" {
		t.Errorf("podGroupPolicy.Extra after FromUnstructured (-want +got):\n%s", diff)
	}
}

func TestTrainingRuntimeNullPolicies(t *testing.T) {
	var spec TrainingRuntimeSpec
	if err := json.Unmarshal([]byte(`{"mlPolicy":null,"podGroupPolicy":null,"template":{}}`), &spec); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if spec.MLPolicy != nil || spec.PodGroupPolicy != nil {
		t.Errorf("mlPolicy = %+v, podGroupPolicy = %+v; want both nil", spec.MLPolicy, spec.PodGroupPolicy)
	}
}

func TestPolicyDeepCopyKeepsExtraIndependent(t *testing.T) {
	t.Run("mlPolicy", func(t *testing.T) {
		orig := &MLPolicy{
			NumNodes:       ptr.To[int32](2),
			MLPolicySource: MLPolicySource{Torch: &TorchMLPolicySource{NumProcPerNode: ptr.To(intstr.FromString("auto"))}},
			Extra:          map[string]apiextensionsv1.JSON{"deepspeed": {Raw: []byte(`{"stage":3}`)}},
		}
		want := &MLPolicy{
			NumNodes:       ptr.To[int32](2),
			MLPolicySource: MLPolicySource{Torch: &TorchMLPolicySource{NumProcPerNode: ptr.To(intstr.FromString("auto"))}},
			Extra:          map[string]apiextensionsv1.JSON{"deepspeed": {Raw: []byte(`{"stage":3}`)}},
		}
		cp := orig.DeepCopy()
		if diff := cmp.Diff(orig, cp); diff != "" {
			t.Fatalf("DeepCopy differs (-orig +copy):\n%s", diff)
		}
		cp.Extra["deepspeed"].Raw[9] = '9' // mutate the bytes in place
		cp.Extra["megatron"] = apiextensionsv1.JSON{Raw: []byte(`{}`)}
		*cp.NumNodes = 7
		cp.Torch.NumProcPerNode = ptr.To(intstr.FromInt32(8))
		if diff := cmp.Diff(want, orig); diff != "" {
			t.Errorf("changing the copy changed the original (-want +got):\n%s", diff)
		}
	})
	t.Run("podGroupPolicy", func(t *testing.T) {
		orig := &PodGroupPolicy{Extra: map[string]apiextensionsv1.JSON{"kai": {Raw: []byte(`{"queue":"a"}`)}}}
		want := &PodGroupPolicy{Extra: map[string]apiextensionsv1.JSON{"kai": {Raw: []byte(`{"queue":"a"}`)}}}
		cp := orig.DeepCopy()
		if diff := cmp.Diff(orig, cp); diff != "" {
			t.Fatalf("DeepCopy differs (-orig +copy):\n%s", diff)
		}
		cp.Extra["kai"].Raw[10] = 'b'
		delete(cp.Extra, "kai")
		cp.Extra["volcano2"] = apiextensionsv1.JSON{Raw: []byte(`{}`)}
		if diff := cmp.Diff(want, orig); diff != "" {
			t.Errorf("changing the copy changed the original (-want +got):\n%s", diff)
		}
	})
	t.Run("runtime spec", func(t *testing.T) {
		var rt TrainingRuntime
		if err := yaml.Unmarshal([]byte(vendorRuntimeYAML), &rt); err != nil {
			t.Fatalf("decoding the runtime: %v", err)
		}
		cp := rt.DeepCopy()
		cp.Spec.MLPolicy.Extra["deepspeed"] = apiextensionsv1.JSON{Raw: []byte(`{"stage":1}`)}
		cp.Spec.PodGroupPolicy.Extra["other"] = apiextensionsv1.JSON{Raw: []byte(`{}`)}
		if diff := cmp.Diff([]string{"deepspeed"}, rt.Spec.MLPolicy.Keys()); diff != "" {
			t.Errorf("original mlPolicy keys (-want +got):\n%s", diff)
		}
		if got := string(rt.Spec.MLPolicy.Extra["deepspeed"].Raw); !strings.Contains(got, `"stage":3`) {
			t.Errorf("original deepspeed = %s, want stage 3", got)
		}
		if diff := cmp.Diff([]string{"kai"}, rt.Spec.PodGroupPolicy.Keys()); diff != "" {
			t.Errorf("original podGroupPolicy keys (-want +got):\n%s", diff)
		}
	})
}
