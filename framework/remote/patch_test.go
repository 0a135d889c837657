package remote_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
)

// testInfo returns an Info with every patchable field set, afresh on each
// call so that a test may change it.
func testInfo() *framework.Info {
	return &framework.Info{
		Version:     framework.InfoVersion,
		Labels:      map[string]string{"team": "a"},
		Annotations: map[string]string{"note": "x"},
		RuntimePolicy: framework.RuntimePolicy{
			MLPolicy: json.RawMessage(`{"numNodes":2,"torch":{}}`),
		},
		PodSets: []framework.PodSet{{
			Name:         "node",
			AncestorStep: "trainer",
			Replicas:     1,
			Count:        2,
			Containers: []framework.Container{{
				Name:  "node",
				Image: "trainer:v1",
				Env:   []corev1.EnvVar{{Name: "A", Value: "1"}},
			}},
		}},
		Template: json.RawMessage(`{"spec":{"replicatedJobs":[{"name":"node"}]}}`),
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// decodeInfo decodes an Info document the way ApplyPatch stores it.
func decodeInfo(t *testing.T, data []byte) *framework.Info {
	t.Helper()
	out := &framework.Info{}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestApplyPatchRefuses(t *testing.T) {
	cases := []struct {
		name    string
		patch   string
		wantErr []string // substrings of the error
	}{
		{
			name:    "add a field Info does not have",
			patch:   `[{"op":"add","path":"/trainJob","value":{"spec":{}}}]`,
			wantErr: []string{"operation 0", `add "/trainJob"`, "outside Info"},
		},
		{
			name:    "replace version, after a valid operation",
			patch:   `[{"op":"add","path":"/labels/x","value":"y"},{"op":"replace","path":"/version","value":"v2"}]`,
			wantErr: []string{"operation 1", `replace "/version"`, "outside Info"},
		},
		{
			name:    "remove the root",
			patch:   `[{"op":"remove","path":""}]`,
			wantErr: []string{"operation 0", `remove ""`, "outside Info"},
		},
		{
			name:    "replace the root",
			patch:   `[{"op":"replace","path":"","value":{"version":"v2"}}]`,
			wantErr: []string{"operation 0", `replace ""`, "outside Info"},
		},
		{
			name:    "move from version into labels",
			patch:   `[{"op":"move","from":"/version","path":"/labels/x"}]`,
			wantErr: []string{"operation 0", `move "/labels/x" from "/version"`, "outside Info"},
		},
		{
			name:    "copy from the TrainJob's spec",
			patch:   `[{"op":"copy","from":"/spec","path":"/labels/x"}]`,
			wantErr: []string{"operation 0", `copy "/labels/x" from "/spec"`, "outside Info"},
		},
		{
			name:    "an escaped slash makes one top-level segment",
			patch:   `[{"op":"add","path":"/podSets~1x","value":1}]`,
			wantErr: []string{"operation 0", `add "/podSets~1x"`, "outside Info"},
		},
		{
			name:    "an escaped slash in an allowed name",
			patch:   `[{"op":"add","path":"/labels~1version","value":"v2"}]`,
			wantErr: []string{"operation 0", `add "/labels~1version"`, "outside Info"},
		},
		{
			// json-patch resolves a pointer without a leading slash from the
			// root: this is /version to it.
			name:    "a path without a leading slash",
			patch:   `[{"op":"replace","path":"labels/version","value":"v2"}]`,
			wantErr: []string{"operation 0", `replace "labels/version"`, "outside Info"},
		},
		{
			name:    "a from without a leading slash",
			patch:   `[{"op":"copy","from":"labels/version","path":"/labels/v"}]`,
			wantErr: []string{"operation 0", `from "labels/version"`, "outside Info"},
		},
		{
			name:    "test of a field outside the patchable ones",
			patch:   `[{"op":"test","path":"/version","value":"v1"}]`,
			wantErr: []string{"operation 0", `test "/version"`, "outside Info"},
		},
		{
			name:    "an operation without a path",
			patch:   `[{"op":"add","value":1}]`,
			wantErr: []string{"not an RFC 6902 JSON Patch", "path"},
		},
		{
			name:    "a move without a from",
			patch:   `[{"op":"move","path":"/labels/x"}]`,
			wantErr: []string{"not an RFC 6902 JSON Patch", "from"},
		},
		{
			name:    "not a JSON Patch",
			patch:   `{"op":"add","path":"/labels/x","value":"y"}`,
			wantErr: []string{"not an RFC 6902 JSON Patch"},
		},
		{
			name:    "remove of a missing path",
			patch:   `[{"op":"remove","path":"/labels/missing"}]`,
			wantErr: []string{"does not apply"},
		},
		{
			name:    "replace of a missing podSet",
			patch:   `[{"op":"replace","path":"/podSets/3/count","value":1}]`,
			wantErr: []string{"does not apply"},
		},
		{
			name:    "a failed test",
			patch:   `[{"op":"test","path":"/labels/team","value":"b"},{"op":"add","path":"/labels/x","value":"y"}]`,
			wantErr: []string{"does not apply"},
		},
		{
			name:    "an unknown operation",
			patch:   `[{"op":"merge","path":"/labels","value":{}}]`,
			wantErr: []string{"not an RFC 6902 JSON Patch", "unsupported operation"},
		},
		{
			name:    "a field a PodSet does not have",
			patch:   `[{"op":"add","path":"/podSets/0/unknownField","value":true}]`,
			wantErr: []string{"not an Info", "unknownField"},
		},
		{
			name:    "a field a container does not have",
			patch:   `[{"op":"add","path":"/podSets/0/containers/0/securityContext","value":{}}]`,
			wantErr: []string{"not an Info", "securityContext"},
		},
		{
			name:    "a value of the wrong type",
			patch:   `[{"op":"replace","path":"/podSets/0/count","value":"two"}]`,
			wantErr: []string{"not an Info"},
		},
		{
			name:    "a label that is not a string",
			patch:   `[{"op":"add","path":"/labels/x","value":{"y":1}}]`,
			wantErr: []string{"not an Info"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info := testInfo()
			doc := mustJSON(t, info)
			err := remote.ApplyPatch(info, doc, []byte(tc.patch))
			if err == nil {
				t.Fatalf("ApplyPatch succeeded, want an error containing %q", tc.wantErr)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("ApplyPatch error %q does not contain %q", err, s)
				}
			}
			if diff := cmp.Diff(testInfo(), info); diff != "" {
				t.Errorf("Info changed by a refused patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyPatchAccepts(t *testing.T) {
	cases := []struct {
		name   string
		patch  string
		change func(*framework.Info) // what the patch does to testInfo()
	}{
		{
			name:   "empty patch",
			patch:  ``,
			change: func(*framework.Info) {},
		},
		{
			name:   "empty list of operations",
			patch:  `[]`,
			change: func(*framework.Info) {},
		},
		{
			name:   "add a label whose key has a slash",
			patch:  `[{"op":"add","path":"/labels/app.kubernetes.io~1name","value":"x"}]`,
			change: func(i *framework.Info) { i.Labels["app.kubernetes.io/name"] = "x" },
		},
		{
			name:   "replace and remove annotations",
			patch:  `[{"op":"add","path":"/annotations/new","value":"v"},{"op":"remove","path":"/annotations/note"}]`,
			change: func(i *framework.Info) { i.Annotations = map[string]string{"new": "v"} },
		},
		{
			name:   "move a label to the annotations",
			patch:  `[{"op":"move","from":"/labels/team","path":"/annotations/team"}]`,
			change: func(i *framework.Info) { i.Labels = map[string]string{}; i.Annotations["team"] = "a" },
		},
		{
			name: "upsert env vars",
			patch: `[{"op":"replace","path":"/podSets/0/containers/0/env/0/value","value":"2"},` +
				`{"op":"add","path":"/podSets/0/containers/0/env/-","value":{"name":"B","value":"3"}}]`,
			change: func(i *framework.Info) {
				i.PodSets[0].Containers[0].UpsertEnv(corev1.EnvVar{Name: "A", Value: "2"}, corev1.EnvVar{Name: "B", Value: "3"})
			},
		},
		{
			name:  "add a podSet and change a count",
			patch: `[{"op":"add","path":"/podSets/-","value":{"name":"launcher","replicas":1,"count":1}},{"op":"replace","path":"/podSets/0/count","value":4}]`,
			change: func(i *framework.Info) {
				i.PodSets[0].Count = 4
				i.PodSets = append(i.PodSets, framework.PodSet{Name: "launcher", Replicas: 1, Count: 1})
			},
		},
		{
			name:  "pod labels on a podSet",
			patch: `[{"op":"add","path":"/podSets/0/podLabels","value":{"scheduling.x-k8s.io/pod-group":"job"}}]`,
			change: func(i *framework.Info) {
				i.PodSets[0].PodLabels = map[string]string{"scheduling.x-k8s.io/pod-group": "job"}
			},
		},
		{
			name:   "replace the template",
			patch:  `[{"op":"replace","path":"/template","value":{"spec":{}}}]`,
			change: func(i *framework.Info) { i.Template = json.RawMessage(`{"spec":{}}`) },
		},
		{
			name:  "change the template inside",
			patch: `[{"op":"add","path":"/template/spec/replicatedJobs/0/replicas","value":2}]`,
			change: func(i *framework.Info) {
				i.Template = json.RawMessage(`{"spec":{"replicatedJobs":[{"name":"node","replicas":2}]}}`)
			},
		},
		{
			name:   "a test operation on a patchable field",
			patch:  `[{"op":"test","path":"/labels/team","value":"a"},{"op":"add","path":"/labels/x","value":"y"}]`,
			change: func(i *framework.Info) { i.Labels["x"] = "y" },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info := testInfo()
			doc := mustJSON(t, info)
			if err := remote.ApplyPatch(info, doc, []byte(tc.patch)); err != nil {
				t.Fatalf("ApplyPatch: %v", err)
			}
			want := testInfo()
			tc.change(want)
			if diff := cmp.Diff(want, info, cmp.Transformer("json", func(r json.RawMessage) string { return compactJSON(t, r) })); diff != "" {
				t.Errorf("patched Info (-want +got):\n%s", diff)
			}
		})
	}
}

func compactJSON(t *testing.T, r json.RawMessage) string {
	if len(r) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(r, &v); err != nil {
		t.Fatalf("not JSON: %s", r)
	}
	return string(mustJSON(t, v))
}

func TestCreatePatchOfEqualDocsIsNil(t *testing.T) {
	cases := []struct {
		name          string
		before, after []byte
	}{
		{name: "same bytes", before: mustJSON(t, testInfo()), after: mustJSON(t, testInfo())},
		{name: "same document, other key order", before: []byte(`{"a":1,"b":[1,2]}`), after: []byte(`{"b":[1,2],"a":1}`)},
		{name: "same document, other spacing", before: []byte(`{"a": 1}`), after: []byte(`{"a":1}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			patch, err := remote.CreatePatch(tc.before, tc.after)
			if err != nil {
				t.Fatalf("CreatePatch: %v", err)
			}
			if patch != nil {
				t.Errorf("CreatePatch = %s, want nil", patch)
			}
		})
	}
}

func TestCreatePatchApplyPatchRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		change func(*framework.Info)
	}{
		{
			name: "labels and annotations with escaped keys",
			change: func(i *framework.Info) {
				i.Labels["a/b~c"] = "1"
				i.Annotations["x~1y"] = "2"
				delete(i.Labels, "team")
			},
		},
		{
			name:   "drop every label",
			change: func(i *framework.Info) { i.Labels = nil },
		},
		{
			name: "env upsert and a count",
			change: func(i *framework.Info) {
				i.PodSets[0].Count = 8
				i.PodSets[0].Containers[0].UpsertEnv(corev1.EnvVar{Name: "A", Value: "9"}, corev1.EnvVar{Name: "PET_NNODES", Value: "8"})
			},
		},
		{
			name: "append a podSet, then remove the first",
			change: func(i *framework.Info) {
				i.PodSets = append(i.PodSets, framework.PodSet{Name: "launcher", Replicas: 1, Count: 1, Containers: []framework.Container{{Name: "l"}}})
				i.PodSets = i.PodSets[1:]
			},
		},
		{
			name: "two podSets swapped",
			change: func(i *framework.Info) {
				i.PodSets = append([]framework.PodSet{{Name: "init", AncestorStep: "dataset-initializer", Replicas: 1, Count: 1}}, i.PodSets...)
			},
		},
		{
			name: "volumes and mounts",
			change: func(i *framework.Info) {
				i.PodSets[0].Volumes = []corev1.Volume{{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}}
				i.PodSets[0].Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "shm", MountPath: "/dev/shm"}}
			},
		},
		{
			name: "policies and template",
			change: func(i *framework.Info) {
				i.RuntimePolicy.MLPolicy = json.RawMessage(`{"numNodes":4,"torch":{"numProcPerNode":"auto"}}`)
				i.RuntimePolicy.PodGroupPolicy = json.RawMessage(`{"coscheduling":{"scheduleTimeoutSeconds":60}}`)
				i.Template = json.RawMessage(`{"spec":{"replicatedJobs":[{"name":"node","replicas":4}]}}`)
			},
		},
		{
			name: "containers emptied",
			change: func(i *framework.Info) {
				i.PodSets[0].Containers = nil
				i.PodSets[0].SchedulerName = "volcano"
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := mustJSON(t, testInfo())
			changed := testInfo()
			tc.change(changed)
			after := mustJSON(t, changed)
			patch, err := remote.CreatePatch(before, after)
			if err != nil {
				t.Fatalf("CreatePatch: %v", err)
			}
			if patch == nil {
				t.Fatal("CreatePatch = nil for different documents")
			}
			got := testInfo()
			if err := remote.ApplyPatch(got, before, patch); err != nil {
				t.Fatalf("ApplyPatch(%s): %v", patch, err)
			}
			if diff := cmp.Diff(decodeInfo(t, after), got); diff != "" {
				t.Errorf("Info after the round trip of %s (-want +got):\n%s", patch, diff)
			}
		})
	}
}
