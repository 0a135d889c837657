package remote_test

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
)

// changeCases are changes a plugin makes to testInfo, of every shape the
// diff distinguishes.
var changeCases = map[string]func(*framework.Info){
	"nothing":         func(*framework.Info) {},
	"a label":         func(i *framework.Info) { i.Labels["owner"] = "torch" },
	"labels from nil": func(i *framework.Info) { i.Labels = nil; i.Labels = map[string]string{"a/b": "c~d"} },
	"remove a map":    func(i *framework.Info) { i.Annotations = nil },
	"count":           func(i *framework.Info) { i.PodSets[0].Count = 8 },
	"env first": func(i *framework.Info) {
		c := &i.PodSets[0].Containers[0]
		c.Env = append([]corev1.EnvVar{{Name: "Z", Value: "0"}}, c.Env...)
	},
	"env reordered and changed": func(i *framework.Info) {
		c := &i.PodSets[0].Containers[0]
		c.Env = []corev1.EnvVar{{Name: "B", Value: "2"}, {Name: "A", Value: "changed"}, {Name: "C", Value: "3"}}
	},
	"env emptied": func(i *framework.Info) { i.PodSets[0].Containers[0].Env = nil },
	"a podSet first": func(i *framework.Info) {
		i.PodSets = append([]framework.PodSet{{Name: "launcher", Replicas: 1, Count: 1}}, i.PodSets...)
	},
	"podSets removed": func(i *framework.Info) { i.PodSets = []framework.PodSet{} },
	"args":            func(i *framework.Info) { i.PodSets[0].Containers[0].Args = []string{"--lr", "0.1"} },
	"resources": func(i *framework.Info) {
		i.PodSets[0].Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}
	},
	"a volume": func(i *framework.Info) {
		i.PodSets[0].Volumes = []corev1.Volume{{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Gi"))}}}}
	},
	"unnamed ports": func(i *framework.Info) {
		i.PodSets[0].Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 1}, {ContainerPort: 2}}
	},
	"template": func(i *framework.Info) {
		i.Template = json.RawMessage(`{"spec":{"replicatedJobs":[{"name":"node","replicas":2}],"suspend":true}}`)
	},
	"policy": func(i *framework.Info) { i.RuntimePolicy.MLPolicy = json.RawMessage(`{"numNodes":3}`) },
}

// richInfo is testInfo with more list elements to move.
func richInfo() *framework.Info {
	i := testInfo()
	i.PodSets[0].Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}, {Name: "C", Value: "3"}}
	i.PodSets[0].Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 2}, {ContainerPort: 3}}
	return i
}

// The Info changes and the patch the SDK computes from two encodings of an
// Info, applied by the host to the first, give the second.
func TestChangesRoundTrip(t *testing.T) {
	for name, change := range changeCases {
		t.Run(name, func(t *testing.T) {
			want := richInfo()
			change(want)
			before, after := mustJSON(t, richInfo()), mustJSON(t, want)

			changes, err := remote.CreateChanges(before, after)
			if err != nil {
				t.Fatalf("CreateChanges: %v", err)
			}
			got := richInfo()
			if err := remote.ApplyInfoChanges(got, changes); err != nil {
				t.Fatalf("ApplyInfoChanges(%s): %v", changes, err)
			}
			if diff := cmp.Diff(asJSON(t, want), asJSON(t, got)); diff != "" {
				t.Errorf("Info from the changes %s (-want +got):\n%s", changes, diff)
			}

			patch, err := remote.CreateChangesPatch(before, after)
			if err != nil {
				t.Fatalf("CreateChangesPatch: %v", err)
			}
			if (len(patch) == 0) != (len(changes) == 0) {
				t.Errorf("patch %s and changes %s: one says no change", patch, changes)
			}
			gotPatched := richInfo()
			if err := remote.ApplyPatch(gotPatched, before, patch); err != nil {
				t.Fatalf("ApplyPatch(%s): %v", patch, err)
			}
			if diff := cmp.Diff(asJSON(t, want), asJSON(t, gotPatched)); diff != "" {
				t.Errorf("Info from the patch %s (-want +got):\n%s", patch, diff)
			}
			if len(patch) > 0 {
				if _, err := jsonpatch.DecodePatch(patch); err != nil {
					t.Errorf("the patch %s is not a JSON Patch: %v", patch, err)
				}
			}
		})
	}
}

// asJSON is info as a decoded JSON document, for comparisons that do not
// depend on how a Quantity caches its string.
func asJSON(t *testing.T, info *framework.Info) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(mustJSON(t, info), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// FuzzChangesRoundTrip takes two documents as a plugin's Info before and
// after its changes: the Info changes and the patch the SDK computes from
// their encodings, applied by the host to the first, give the second.
func FuzzChangesRoundTrip(f *testing.F) {
	base := mustJSONF(f, richInfo())
	for _, change := range changeCases {
		after := richInfo()
		change(after)
		f.Add(base, mustJSONF(f, after))
	}
	f.Fuzz(func(t *testing.T, beforeDoc, afterDoc []byte) {
		before, after := &framework.Info{}, &framework.Info{}
		if json.Unmarshal(beforeDoc, before) != nil || json.Unmarshal(afterDoc, after) != nil ||
			before.Version != framework.InfoVersion || after.Version != before.Version {
			return
		}
		b, a := mustJSON(t, before), mustJSON(t, after)
		// Only documents that encode and decode to themselves: Info as a
		// plugin holds it.
		for _, doc := range [][]byte{b, a} {
			back := &framework.Info{}
			if json.Unmarshal(doc, back) != nil || string(mustJSON(t, back)) != string(doc) {
				return
			}
		}
		changes, err := remote.CreateChanges(b, a)
		if err != nil {
			t.Fatalf("CreateChanges: %v", err)
		}
		got := &framework.Info{}
		_ = json.Unmarshal(b, got)
		if err := remote.ApplyInfoChanges(got, changes); err != nil {
			t.Fatalf("ApplyInfoChanges(%s): %v", changes, err)
		}
		if diff := cmp.Diff(asJSON(t, after), asJSON(t, got)); diff != "" {
			t.Fatalf("Info from the changes %s (-want +got):\n%s", changes, diff)
		}
		patch, err := remote.CreateChangesPatch(b, a)
		if err != nil {
			t.Fatalf("CreateChangesPatch: %v", err)
		}
		patched := &framework.Info{}
		_ = json.Unmarshal(b, patched)
		if err := remote.ApplyPatch(patched, b, patch); err != nil {
			t.Fatalf("ApplyPatch(%s): %v", patch, err)
		}
		if diff := cmp.Diff(asJSON(t, after), asJSON(t, patched)); diff != "" {
			t.Fatalf("Info from the patch %s (-want +got):\n%s", patch, diff)
		}
	})
}

func mustJSONF(f *testing.F, v any) []byte {
	f.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		f.Fatal(err)
	}
	return data
}
