package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func configMapVolume(name, configMap string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
	}}}
}

func TestUpsertVolume(t *testing.T) {
	cases := []struct {
		name string
		have []corev1.Volume
		add  []corev1.Volume
		want []corev1.Volume
	}{
		{
			name: "nothing to add leaves the volumes alone",
			have: []corev1.Volume{emptyDir("data")},
			want: []corev1.Volume{emptyDir("data")},
		},
		{
			name: "adds to a pod without volumes",
			add:  []corev1.Volume{emptyDir("data")},
			want: []corev1.Volume{emptyDir("data")},
		},
		{
			name: "appends new names in the given order",
			have: []corev1.Volume{emptyDir("a")},
			add:  []corev1.Volume{emptyDir("c"), emptyDir("b")},
			want: []corev1.Volume{emptyDir("a"), emptyDir("c"), emptyDir("b")},
		},
		{
			name: "replaces a volume of the same name in place",
			have: []corev1.Volume{emptyDir("a"), emptyDir("config"), emptyDir("z")},
			add:  []corev1.Volume{configMapVolume("config", "settings")},
			want: []corev1.Volume{emptyDir("a"), configMapVolume("config", "settings"), emptyDir("z")},
		},
		{
			name: "replaces and appends in one call",
			have: []corev1.Volume{emptyDir("config")},
			add:  []corev1.Volume{emptyDir("new"), configMapVolume("config", "settings")},
			want: []corev1.Volume{configMapVolume("config", "settings"), emptyDir("new")},
		},
		{
			name: "the last of two volumes of the same name wins",
			add:  []corev1.Volume{emptyDir("config"), configMapVolume("config", "settings")},
			want: []corev1.Volume{configMapVolume("config", "settings")},
		},
		{
			name: "upserting what is there changes nothing",
			have: []corev1.Volume{emptyDir("a"), configMapVolume("b", "x")},
			add:  []corev1.Volume{configMapVolume("b", "x"), emptyDir("a")},
			want: []corev1.Volume{emptyDir("a"), configMapVolume("b", "x")},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := &PodSet{Volumes: tc.have}
			ps.UpsertVolume(tc.add...)
			if diff := cmp.Diff(tc.want, ps.Volumes); diff != "" {
				t.Errorf("volumes (-want +got):\n%s", diff)
			}
		})
	}
}

func mount(name, path string) corev1.VolumeMount {
	return corev1.VolumeMount{Name: name, MountPath: path}
}

func TestUpsertVolumeMount(t *testing.T) {
	readOnly := mount("data", "/data")
	readOnly.ReadOnly = true
	subPath := func(name, path, sub string) corev1.VolumeMount {
		m := mount(name, path)
		m.SubPath = sub
		return m
	}
	cases := []struct {
		name string
		have []corev1.VolumeMount
		add  []corev1.VolumeMount
		want []corev1.VolumeMount
	}{
		{
			name: "nothing to add leaves the mounts alone",
			have: []corev1.VolumeMount{mount("data", "/data")},
			want: []corev1.VolumeMount{mount("data", "/data")},
		},
		{
			name: "adds to a container without mounts",
			add:  []corev1.VolumeMount{mount("data", "/data")},
			want: []corev1.VolumeMount{mount("data", "/data")},
		},
		{
			name: "appends new paths in the given order",
			have: []corev1.VolumeMount{mount("a", "/a")},
			add:  []corev1.VolumeMount{mount("c", "/c"), mount("b", "/b")},
			want: []corev1.VolumeMount{mount("a", "/a"), mount("c", "/c"), mount("b", "/b")},
		},
		{
			name: "replaces the mount at the same path in place",
			have: []corev1.VolumeMount{mount("a", "/a"), mount("data", "/data"), mount("z", "/z")},
			add:  []corev1.VolumeMount{readOnly},
			want: []corev1.VolumeMount{mount("a", "/a"), readOnly, mount("z", "/z")},
		},
		{
			name: "another volume at a taken path replaces the mount there",
			have: []corev1.VolumeMount{mount("old", "/data")},
			add:  []corev1.VolumeMount{mount("new", "/data")},
			want: []corev1.VolumeMount{mount("new", "/data")},
		},
		{
			name: "one volume may be mounted at several paths",
			have: []corev1.VolumeMount{subPath("config", "/etc/app/a.yaml", "a.yaml")},
			add:  []corev1.VolumeMount{subPath("config", "/etc/app/b.yaml", "b.yaml")},
			want: []corev1.VolumeMount{subPath("config", "/etc/app/a.yaml", "a.yaml"), subPath("config", "/etc/app/b.yaml", "b.yaml")},
		},
		{
			name: "upserting what is there changes nothing",
			have: []corev1.VolumeMount{mount("a", "/a"), readOnly},
			add:  []corev1.VolumeMount{readOnly, mount("a", "/a")},
			want: []corev1.VolumeMount{mount("a", "/a"), readOnly},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Container{VolumeMounts: tc.have}
			c.UpsertVolumeMount(tc.add...)
			if diff := cmp.Diff(tc.want, c.VolumeMounts); diff != "" {
				t.Errorf("volume mounts (-want +got):\n%s", diff)
			}
		})
	}
}
