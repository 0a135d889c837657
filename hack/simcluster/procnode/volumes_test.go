package procnode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestMaterializeVolumes(t *testing.T) {
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv/data"}}},
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
			Items:                []corev1.KeyToPath{{Key: "a", Path: "sub/a.txt", Mode: ptr.To[int32](0o600)}},
		}}},
		{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec"}}},
		{Name: "maybe", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "missing", Optional: ptr.To(true)}}},
		{Name: "api", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "trainforge", ExpirationSeconds: ptr.To[int64](1200), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "b", Path: "b"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			}}},
		}}}},
	}
	dir := t.TempDir()
	paths, err := materializeVolumes(context.Background(), testObjects(), testObjects(), pod, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if paths["host"] != "/srv/data" || paths["scratch"] != filepath.Join(dir, "scratch") {
		t.Errorf("paths %v", paths)
	}
	for rel, want := range map[string]string{
		"cfg/sub/a.txt": "1",
		"sec/pw":        "s3cret",
		"api/token":     "job-node-0-1-abcde|trainforge|1200",
		"api/b":         "2",
		"api/namespace": "ns",
		"api/labels":    `batch.kubernetes.io/job-completion-index="1"`,
	} {
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", rel, got, err, want)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "cfg/sub/a.txt")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode of an item: %v, %v", st.Mode(), err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "maybe")); len(entries) != 0 {
		t.Errorf("an optional missing secret has files: %v", entries)
	}
}

func TestMaterializeVolumesErrorsNameTheVolume(t *testing.T) {
	for want, v := range map[string]corev1.Volume{
		`volume cfg: configMap: configmaps "nope" not found`: {Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}}}},
		`volume cfg: ConfigMap ns/cfg has no key "zz"`:       {Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "zz", Path: "zz"}}}}},
		`volume cfg: path "../escape" leaves the volume`:     {Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "a", Path: "../escape"}}}}},
		`volume nfs: unsupported volume type`:                {Name: "nfs", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "x", Path: "/"}}},
	} {
		pod := testPod()
		pod.Spec.Volumes = []corev1.Volume{v}
		_, err := materializeVolumes(context.Background(), testObjects(), testObjects(), pod, nil, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to contain %q", err, want)
		}
	}
}

// A hostPath of type DirectoryOrCreate or FileOrCreate exists once the
// volumes are ready, as a kubelet makes it; Directory of a missing path is
// the volume's error.
func TestHostPathTypes(t *testing.T) {
	base := t.TempDir()
	dir, file := filepath.Join(base, "a", "checkpoints"), filepath.Join(base, "b", "lock")
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "dir", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}},
		{Name: "file", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: file, Type: ptr.To(corev1.HostPathFileOrCreate)}}},
	}
	if _, err := materializeVolumes(context.Background(), testObjects(), testObjects(), pod, nil, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("DirectoryOrCreate: %v, %v", st, err)
	}
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() {
		t.Errorf("FileOrCreate: %v, %v", st, err)
	}
	pod.Spec.Volumes = []corev1.Volume{{Name: "dir", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
		Path: filepath.Join(base, "missing"), Type: ptr.To(corev1.HostPathDirectory)}}}}
	if _, err := materializeVolumes(context.Background(), testObjects(), testObjects(), pod, nil, t.TempDir()); err == nil || !strings.Contains(err.Error(), "volume dir") {
		t.Errorf("a missing Directory: %v", err)
	}
}
