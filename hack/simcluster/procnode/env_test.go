package procnode

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// fakeObjects serves ConfigMaps and Secrets from maps, and tokens that
// say what they were asked for.
type fakeObjects struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

func (f fakeObjects) configMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f fakeObjects) secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (f fakeObjects) token(_ context.Context, pod *corev1.Pod, audience string, exp int64) (string, error) {
	return strings.Join([]string{pod.Name, audience, resource.NewQuantity(exp, resource.DecimalSI).String()}, "|"), nil
}

func testObjects() fakeObjects {
	return fakeObjects{
		configMaps: map[string]*corev1.ConfigMap{"ns/cfg": {Data: map[string]string{"a": "1", "b": "2"}}},
		secrets:    map[string]*corev1.Secret{"ns/sec": {Data: map[string][]byte{"pw": []byte("s3cret")}}},
	}
}

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "job-node-0-1-abcde", UID: "uid-1",
			Labels:      map[string]string{"batch.kubernetes.io/job-completion-index": "1"},
			Annotations: map[string]string{"jobset.sigs.k8s.io/restart-attempt": "3"},
		},
		Spec: corev1.PodSpec{NodeName: "process-node-1", Hostname: "job-node-0-1", Subdomain: "job"},
		Status: corev1.PodStatus{
			PodIP: "127.5.0.2", PodIPs: []corev1.PodIP{{IP: "127.5.0.2"}},
			HostIP: "127.5.255.1", HostIPs: []corev1.HostIP{{IP: "127.5.255.1"}},
		},
	}
}

func TestContainerEnv(t *testing.T) {
	pod := testPod()
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	c := &corev1.Container{
		Name: "main",
		EnvFrom: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}, Prefix: "CFG_"},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}, Optional: ptr.To(true)}},
		},
		Env: []corev1.EnvVar{
			{Name: "INDEX", ValueFrom: field("metadata.labels['batch.kubernetes.io/job-completion-index']")},
			{Name: "ATTEMPT", ValueFrom: field("metadata.annotations['jobset.sigs.k8s.io/restart-attempt']")},
			{Name: "NAME", ValueFrom: field("metadata.name")},
			{Name: "NS", ValueFrom: field("metadata.namespace")},
			{Name: "UID", ValueFrom: field("metadata.uid")},
			{Name: "NODE", ValueFrom: field("spec.nodeName")},
			{Name: "POD_IP", ValueFrom: field("status.podIP")},
			{Name: "HOST_IP", ValueFrom: field("status.hostIP")},
			{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "pw"}}},
			{Name: "B", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "b"}}},
			{Name: "NOPE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "zz", Optional: ptr.To(true)}}},
			{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			{Name: "MEM_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}}},
			{Name: "ADDR", Value: "$(POD_IP):$(PORT)"},
			{Name: "PORT", Value: "29500"},
			{Name: "LATER", Value: "$(PORT) $(KUBERNETES_SERVICE_HOST) $$(PORT)"},
			{Name: "CFG_a", Value: "replaced"},
		},
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1536Ki")}},
	}
	node := &corev1.Node{Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}
	env, err := containerEnv(context.Background(), testObjects(), pod, c, node, map[string]string{"KUBERNETES_SERVICE_HOST": "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range env {
		got = append(got, e.Name+"="+e.Value)
	}
	want := []string{
		"CFG_b=2", "INDEX=1", "ATTEMPT=3", "NAME=job-node-0-1-abcde", "NS=ns", "UID=uid-1", "NODE=process-node-1",
		"POD_IP=127.5.0.2", "HOST_IP=127.5.255.1", "PW=s3cret", "B=2", "CPU=4", "MEM_MI=2",
		"ADDR=127.5.0.2:$(PORT)", "PORT=29500", "LATER=29500 127.0.0.1 $(PORT)", "CFG_a=replaced",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("env:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestContainerEnvErrorsNameTheField(t *testing.T) {
	pod := testPod()
	for name, e := range map[string]corev1.EnvVar{
		`env[0] (X): valueFrom.configMapKeyRef: ConfigMap ns/cfg has no key "zz"`: {Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "zz"}}},
		`env[0] (X): valueFrom.secretKeyRef: secrets "gone" not found`:            {Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Key: "k"}}},
		`env[0] (X): valueFrom.fieldRef: unsupported fieldPath "spec.bogus"`:      {Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.bogus"}}},
	} {
		c := &corev1.Container{Name: "main", Env: []corev1.EnvVar{e}}
		_, err := containerEnv(context.Background(), testObjects(), pod, c, nil, nil)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v, want it to contain %q", err, name)
		}
	}
}
