package procnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// tokens makes service-account tokens bound to a pod (TokenRequest).
type tokens interface {
	token(ctx context.Context, pod *corev1.Pod, audience string, expirationSeconds int64) (string, error)
}

// materializeVolumes writes the pod's volumes under dir, one directory
// each, and returns where each volume's content is, by name. A hostPath
// volume is its host path.
func materializeVolumes(ctx context.Context, objs objects, toks tokens, pod *corev1.Pod, node *corev1.Node, dir string) (map[string]string, error) {
	paths := map[string]string{}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.HostPath != nil {
			if err := prepareHostPath(v.HostPath); err != nil {
				return nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			paths[v.Name] = v.HostPath.Path
			continue
		}
		path := filepath.Join(dir, v.Name)
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, err
		}
		paths[v.Name] = path
		files, err := volumeFiles(ctx, objs, toks, pod, node, v)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if err := writeFiles(path, files); err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
	}
	return paths, nil
}

// A volumeFile is one file of a ConfigMap, Secret, downward-API or
// projected volume.
type volumeFile struct {
	data []byte
	mode os.FileMode
}

// volumeFiles is the content of a volume by relative path; nil for an
// emptyDir.
func volumeFiles(ctx context.Context, objs objects, toks tokens, pod *corev1.Pod, node *corev1.Node, v *corev1.Volume) (map[string]volumeFile, error) {
	files := map[string]volumeFile{}
	switch {
	case v.EmptyDir != nil:
		return nil, nil
	case v.ConfigMap != nil:
		return files, configMapFiles(ctx, objs, pod, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, mode(v.ConfigMap.DefaultMode, 0o644), files)
	case v.Secret != nil:
		return files, secretFiles(ctx, objs, pod, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, mode(v.Secret.DefaultMode, 0o644), files)
	case v.DownwardAPI != nil:
		return files, downwardFiles(pod, node, v.DownwardAPI.Items, mode(v.DownwardAPI.DefaultMode, 0o644), files)
	case v.Projected != nil:
		def := mode(v.Projected.DefaultMode, 0o644)
		for i, src := range v.Projected.Sources {
			var err error
			switch {
			case src.ServiceAccountToken != nil:
				t := src.ServiceAccountToken
				exp := int64(3600)
				if t.ExpirationSeconds != nil {
					exp = *t.ExpirationSeconds
				}
				var tok string
				if tok, err = toks.token(ctx, pod, t.Audience, exp); err == nil {
					files[t.Path] = volumeFile{data: []byte(tok), mode: def}
				}
			case src.ConfigMap != nil:
				err = configMapFiles(ctx, objs, pod, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, def, files)
			case src.Secret != nil:
				err = secretFiles(ctx, objs, pod, src.Secret.Name, src.Secret.Items, src.Secret.Optional, def, files)
			case src.DownwardAPI != nil:
				err = downwardFiles(pod, node, src.DownwardAPI.Items, def, files)
			default:
				err = fmt.Errorf("unsupported source (the simulated kubelet supports serviceAccountToken, configMap, secret, downwardAPI)")
			}
			if err != nil {
				return nil, fmt.Errorf("projected.sources[%d]: %w", i, err)
			}
		}
		return files, nil
	}
	return nil, fmt.Errorf("unsupported volume type: process nodes support emptyDir, hostPath, configMap, secret, downwardAPI and projected volumes")
}

func mode(m *int32, def os.FileMode) os.FileMode {
	if m == nil {
		return def
	}
	return os.FileMode(*m)
}

func configMapFiles(ctx context.Context, objs objects, pod *corev1.Pod, name string, items []corev1.KeyToPath, opt *bool, def os.FileMode, files map[string]volumeFile) error {
	cm, err := objs.configMap(ctx, pod.Namespace, name)
	if err != nil {
		if optional(opt) {
			return nil
		}
		return fmt.Errorf("configMap: %w", err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyFiles("ConfigMap "+pod.Namespace+"/"+name, data, items, opt, def, files)
}

func secretFiles(ctx context.Context, objs objects, pod *corev1.Pod, name string, items []corev1.KeyToPath, opt *bool, def os.FileMode, files map[string]volumeFile) error {
	s, err := objs.secret(ctx, pod.Namespace, name)
	if err != nil {
		if optional(opt) {
			return nil
		}
		return fmt.Errorf("secret: %w", err)
	}
	return keyFiles("Secret "+pod.Namespace+"/"+name, s.Data, items, opt, def, files)
}

// keyFiles adds the keys of a ConfigMap or Secret as files: all of them
// by key, or the items' keys at the items' paths.
func keyFiles(what string, data map[string][]byte, items []corev1.KeyToPath, opt *bool, def os.FileMode, files map[string]volumeFile) error {
	if len(items) == 0 {
		for k, v := range data {
			files[k] = volumeFile{data: v, mode: def}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional(opt) {
				continue
			}
			return fmt.Errorf("%s has no key %q", what, it.Key)
		}
		files[it.Path] = volumeFile{data: v, mode: mode(it.Mode, def)}
	}
	return nil
}

func downwardFiles(pod *corev1.Pod, node *corev1.Node, items []corev1.DownwardAPIVolumeFile, def os.FileMode, files map[string]volumeFile) error {
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = podField(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = resourceField(pod, nil, node, it.ResourceFieldRef)
		default:
			err = fmt.Errorf("neither fieldRef nor resourceFieldRef")
		}
		if err != nil {
			return fmt.Errorf("downwardAPI item %s: %w", it.Path, err)
		}
		files[it.Path] = volumeFile{data: []byte(v), mode: mode(it.Mode, def)}
	}
	return nil
}

// writeFiles writes files under dir, refusing paths that leave it.
func writeFiles(dir string, files map[string]volumeFile) error {
	for _, rel := range sortedKeys(files) {
		clean := filepath.Clean(rel)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("path %q leaves the volume", rel)
		}
		path := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f := files[rel]
		if err := os.WriteFile(path, f.data, f.mode.Perm()); err != nil {
			return err
		}
		if err := os.Chmod(path, f.mode.Perm()); err != nil {
			return err
		}
	}
	return nil
}

// A mount is a bind mount of a container's process: source on the host at
// target in the process's mount namespace.
type mount struct {
	source, target string
	readOnly       bool
}

// containerMounts are the bind mounts of a container: its volumeMounts
// (with subPath) and the pod's hosts file at /etc/hosts, parents before
// children.
func containerMounts(c *corev1.Container, volumes map[string]string, hostsFile string) ([]mount, error) {
	mounts := []mount{{source: hostsFile, target: "/etc/hosts"}}
	for _, vm := range c.VolumeMounts {
		src, ok := volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("container %s: volumeMount %s: the pod has no volume %q", c.Name, vm.MountPath, vm.Name)
		}
		if !filepath.IsAbs(vm.MountPath) {
			return nil, fmt.Errorf("container %s: volumeMount of %s: mountPath %q is not absolute", c.Name, vm.Name, vm.MountPath)
		}
		if vm.SubPath != "" {
			sub := filepath.Clean(vm.SubPath)
			if filepath.IsAbs(sub) || sub == ".." || strings.HasPrefix(sub, "../") {
				return nil, fmt.Errorf("container %s: volumeMount of %s: subPath %q leaves the volume", c.Name, vm.Name, vm.SubPath)
			}
			src = filepath.Join(src, sub)
		}
		mounts = append(mounts, mount{source: src, target: filepath.Clean(vm.MountPath), readOnly: vm.ReadOnly})
	}
	sort.SliceStable(mounts, func(i, j int) bool {
		return strings.Count(mounts[i].target, "/") < strings.Count(mounts[j].target, "/")
	})
	return mounts, nil
}

// prepareHostPath does what a kubelet does for a hostPath volume's type
// before it mounts it: the *OrCreate types create what is missing (a
// directory 0755, an empty file 0644), Directory and File require it. A
// bind mount of a missing path would fail the container with mount's own
// exit code instead.
func prepareHostPath(h *corev1.HostPathVolumeSource) error {
	typ := corev1.HostPathUnset
	if h.Type != nil {
		typ = *h.Type
	}
	switch typ {
	case corev1.HostPathDirectoryOrCreate:
		return os.MkdirAll(h.Path, 0o755)
	case corev1.HostPathFileOrCreate:
		if err := os.MkdirAll(filepath.Dir(h.Path), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(h.Path, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return err
		}
		return f.Close()
	case corev1.HostPathDirectory, corev1.HostPathFile:
		st, err := os.Stat(h.Path)
		if err != nil {
			return fmt.Errorf("hostPath type %s: %w", typ, err)
		}
		if st.IsDir() != (typ == corev1.HostPathDirectory) {
			return fmt.Errorf("hostPath type %s: %s is not one", typ, h.Path)
		}
	}
	return nil
}
