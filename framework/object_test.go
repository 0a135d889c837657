package framework_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/trainforge/trainforge/framework"
)

func TestToObject(t *testing.T) {
	configMap := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	cases := []struct {
		name string
		info *framework.Info
		obj  runtime.Object
		gvk  schema.GroupVersionKind
		want map[string]any
	}{
		{
			name: "Info's labels and annotations under the object's own",
			info: &framework.Info{
				Labels:      map[string]string{"team": "a", "tier": "info"},
				Annotations: map[string]string{"note": "from info"},
			},
			obj: &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "job-config", Labels: map[string]string{"tier": "own"}},
				Data:       map[string]string{"k": "v"},
			},
			gvk: configMap,
			want: map[string]any{
				"apiVersion": "v1",
				"kind":       "ConfigMap",
				"metadata": map[string]any{
					"name":        "job-config",
					"labels":      map[string]any{"team": "a", "tier": "own"},
					"annotations": map[string]any{"note": "from info"},
				},
				"data": map[string]any{"k": "v"},
			},
		},
		{
			name: "no labels from anywhere: no empty maps",
			info: &framework.Info{},
			obj:  &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "job-config"}},
			gvk:  configMap,
			want: map[string]any{
				"apiVersion": "v1",
				"kind":       "ConfigMap",
				"metadata":   map[string]any{"name": "job-config"},
			},
		},
		{
			name: "the empty status of a typed object is left out",
			info: nil,
			obj: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "job-svc"},
				Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone},
			},
			gvk: corev1.SchemeGroupVersion.WithKind("Service"),
			want: map[string]any{
				"apiVersion": "v1",
				"kind":       "Service",
				"metadata":   map[string]any{"name": "job-svc"},
				"spec":       map[string]any{"clusterIP": "None"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := framework.ToObject(tc.info, tc.obj, tc.gvk)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Object); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
		})
	}
}

// TestToObjectLeavesInfoAlone: the object's labels are a copy, so a
// plugin that changes them later does not change Info (shared by every
// object of the job).
func TestToObjectLeavesInfoAlone(t *testing.T) {
	info := &framework.Info{Labels: map[string]string{"team": "a"}}
	u, err := framework.ToObject(info, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err != nil {
		t.Fatal(err)
	}
	labels := u.GetLabels()
	labels["team"] = "b"
	u.SetLabels(labels)
	if info.Labels["team"] != "a" {
		t.Errorf("Info's labels changed with the object's: %v", info.Labels)
	}
}
