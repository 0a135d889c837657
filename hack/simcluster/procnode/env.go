package procnode

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// objects gives the ConfigMaps and Secrets a pod's env and volumes refer
// to; the agent reads them from the API server, the tests from maps.
type objects interface {
	configMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// baseEnv is what an image would give every container: a PATH of the
// host's system directories and HOME. Debian's directories come before
// /usr/local's, unlike Debian's own PATH: a runtime's `python3` or
// `torchrun` must be Debian's, which sees python3-torch and
// python3-xgboost, and another Python installed in /usr/local/bin (one
// built from source, a Python image's) would not import them.
var baseEnv = []string{
	"PATH=/usr/bin:/usr/sbin:/bin:/sbin:/usr/local/bin:/usr/local/sbin",
	"HOME=/root",
}

// containerEnv resolves a container's environment as the kubelet does:
// envFrom in order, then env in order (a later name replaces an earlier
// one), each value with $(NAME) of the names defined before it and of
// service expanded; service holds the variables every container gets
// (KUBERNETES_SERVICE_HOST...). It returns the variables in order.
func containerEnv(ctx context.Context, objs objects, pod *corev1.Pod, c *corev1.Container, node *corev1.Node, service map[string]string) ([]corev1.EnvVar, error) {
	var out []corev1.EnvVar
	defined := map[string]string{}
	set := func(name, value string) {
		if _, ok := defined[name]; ok {
			for i := range out {
				if out[i].Name == name {
					out = append(out[:i], out[i+1:]...)
					break
				}
			}
		}
		defined[name] = value
		out = append(out, corev1.EnvVar{Name: name, Value: value})
	}
	for i, from := range c.EnvFrom {
		field := fmt.Sprintf("container %s: envFrom[%d]", c.Name, i)
		var data map[string]string
		switch {
		case from.ConfigMapRef != nil:
			cm, err := objs.configMap(ctx, pod.Namespace, from.ConfigMapRef.Name)
			if err != nil {
				if optional(from.ConfigMapRef.Optional) {
					continue
				}
				return nil, fmt.Errorf("%s.configMapRef: %w", field, err)
			}
			data = cm.Data
		case from.SecretRef != nil:
			s, err := objs.secret(ctx, pod.Namespace, from.SecretRef.Name)
			if err != nil {
				if optional(from.SecretRef.Optional) {
					continue
				}
				return nil, fmt.Errorf("%s.secretRef: %w", field, err)
			}
			data = map[string]string{}
			for k, v := range s.Data {
				data[k] = string(v)
			}
		default:
			return nil, fmt.Errorf("%s: neither configMapRef nor secretRef", field)
		}
		for _, k := range sortedKeys(data) {
			set(from.Prefix+k, data[k])
		}
	}
	for i, e := range c.Env {
		field := fmt.Sprintf("container %s: env[%d] (%s)", c.Name, i, e.Name)
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, mapLookup(defined, service)))
			continue
		}
		v, ok, err := envValueFrom(ctx, objs, pod, c, node, e.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	return out, nil
}

// envValueFrom resolves one valueFrom; ok is false for an optional key
// that is missing, which the kubelet leaves out of the environment.
func envValueFrom(ctx context.Context, objs objects, pod *corev1.Pod, c *corev1.Container, node *corev1.Node, from *corev1.EnvVarSource) (string, bool, error) {
	switch {
	case from.FieldRef != nil:
		v, err := podField(pod, from.FieldRef.FieldPath)
		if err != nil {
			return "", false, fmt.Errorf("valueFrom.fieldRef: %w", err)
		}
		return v, true, nil
	case from.ResourceFieldRef != nil:
		v, err := resourceField(pod, c, node, from.ResourceFieldRef)
		if err != nil {
			return "", false, fmt.Errorf("valueFrom.resourceFieldRef: %w", err)
		}
		return v, true, nil
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := objs.configMap(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if optional(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("valueFrom.configMapKeyRef: %w", err)
		}
		if v, ok := cm.Data[ref.Key]; ok {
			return v, true, nil
		}
		if v, ok := cm.BinaryData[ref.Key]; ok {
			return string(v), true, nil
		}
		if optional(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("valueFrom.configMapKeyRef: ConfigMap %s/%s has no key %q", pod.Namespace, ref.Name, ref.Key)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := objs.secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if optional(ref.Optional) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("valueFrom.secretKeyRef: %w", err)
		}
		if v, ok := s.Data[ref.Key]; ok {
			return string(v), true, nil
		}
		if optional(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("valueFrom.secretKeyRef: Secret %s/%s has no key %q", pod.Namespace, ref.Name, ref.Key)
	}
	return "", false, fmt.Errorf("valueFrom has none of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef (what the simulated kubelet supports)")
}

func optional(b *bool) bool { return b != nil && *b }

var subscript = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']*)'\]$`)

// podField is the value of a fieldRef's fieldPath, of those the kubelet
// supports in env.
func podField(pod *corev1.Pod, path string) (string, error) {
	if m := subscript.FindStringSubmatch(path); m != nil {
		if m[1] == "labels" {
			return pod.Labels[m[2]], nil
		}
		return pod.Annotations[m[2]], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.hostIPs":
		return joinIPs(pod.Status.HostIPs, func(ip corev1.HostIP) string { return ip.IP }), nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.podIPs":
		return joinIPs(pod.Status.PodIPs, func(ip corev1.PodIP) string { return ip.IP }), nil
	}
	return "", fmt.Errorf("unsupported fieldPath %q: supported are metadata.name, metadata.namespace, metadata.uid, metadata.labels['KEY'], metadata.annotations['KEY'], spec.nodeName, spec.serviceAccountName, status.hostIP(s), status.podIP(s)", path)
}

func joinIPs[T any](ips []T, ip func(T) string) string {
	s := make([]string, len(ips))
	for i := range ips {
		s[i] = ip(ips[i])
	}
	return strings.Join(s, ",")
}

// formatMap writes labels or annotations as the downward API does:
// key="value" lines, sorted by key, values quoted as Go quotes them.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String()
}

// resourceField is a resourceFieldRef's value as the kubelet computes it:
// the container's request or limit (a missing limit is the node's
// allocatable), divided by the divisor and rounded up.
func resourceField(pod *corev1.Pod, self *corev1.Container, node *corev1.Node, ref *corev1.ResourceFieldSelector) (string, error) {
	c := self
	if ref.ContainerName != "" {
		c = findContainer(pod, ref.ContainerName)
		if c == nil {
			return "", fmt.Errorf("pod has no container %q", ref.ContainerName)
		}
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported resource %q: want limits.NAME or requests.NAME", ref.Resource)
	}
	rn := corev1.ResourceName(name)
	var q resource.Quantity
	if kind == "limits" {
		var found bool
		if q, found = c.Resources.Limits[rn]; !found && node != nil {
			q = node.Status.Allocatable[rn]
		}
	} else {
		q = c.Resources.Requests[rn]
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if rn == corev1.ResourceCPU {
		return fmt.Sprint(int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))), nil
	}
	return fmt.Sprint(int64(math.Ceil(float64(q.Value()) / float64(divisor.Value())))), nil
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	return nil
}
