package trainjobstatus

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/frameworktest"
)

const args = `{"url":"https://trainforge-webhook-service.trainforge-system.svc:10443","caConfigMapName":"trainforge-status-ca","tokenExpirationSeconds":3600}`

// twoContainers is a runtime whose trainer step has a main container and
// a sidecar, and an initializer step that must not be touched.
const twoContainers = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: plain
spec:
  template:
    spec:
      replicatedJobs:
        - name: dataset-initializer
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
            spec:
              template:
                spec:
                  containers:
                    - name: dataset-initializer
                      image: ghcr.io/kubeflow/trainer/dataset-initializer
        - name: workers
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  volumes:
                    - name: data
                      emptyDir: {}
                  containers:
                    - name: proxy
                      image: envoyproxy/envoy
                    - name: node
                      image: python:3.12
                      env:
                        - name: KUBEFLOW_TRAINER_SERVER_URL
                          value: https://stale.example.com
`

func configured(t *testing.T) *plugin {
	t.Helper()
	p := New(nil).(*plugin)
	if err := p.Configure(context.Background(), json.RawMessage(args)); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return p
}

func TestEnforceGivesEveryTrainerContainerTheProtocol(t *testing.T) {
	_, job := frameworktest.Seed(t, frameworktest.SeedPlainML)
	job.Namespace, job.Name = "team-a", "llm"
	info := frameworktest.NewInfo(t, job, frameworktest.Runtime(t, twoContainers))
	if err := configured(t).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatalf("EnforceMLPolicy: %v", err)
	}

	wantEnv := []corev1.EnvVar{
		{Name: "KUBEFLOW_TRAINER_SERVER_URL", Value: "https://trainforge-webhook-service.trainforge-system.svc:10443/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llm/status"},
		{Name: "KUBEFLOW_TRAINER_SERVER_CA_CERT", Value: "/var/run/secrets/kubeflow/trainer/ca.crt"},
		{Name: "KUBEFLOW_TRAINER_SERVER_TOKEN", Value: "/var/run/secrets/kubeflow/trainer/token"},
	}
	wantMounts := []corev1.VolumeMount{{Name: "kubeflow-trainer-token", MountPath: "/var/run/secrets/kubeflow/trainer", ReadOnly: true}}
	workers := info.PodSet("workers")
	for _, c := range workers.Containers {
		env := c.Env
		if c.Name == "node" {
			// The runtime's stale value is replaced in place.
			if env[0].Name != "KUBEFLOW_TRAINER_SERVER_URL" {
				t.Fatalf("container node: the runtime's variable moved: %v", env)
			}
		}
		got := map[string]string{}
		for _, e := range env {
			got[e.Name] = e.Value
		}
		for _, w := range wantEnv {
			if got[w.Name] != w.Value {
				t.Errorf("container %s: %s = %q, want %q", c.Name, w.Name, got[w.Name], w.Value)
			}
		}
		if len(env) != 3 {
			t.Errorf("container %s: %d variables, want the 3 of the protocol: %v", c.Name, len(env), env)
		}
		if diff := cmp.Diff(wantMounts, c.VolumeMounts); diff != "" {
			t.Errorf("container %s mounts (-want +got):\n%s", c.Name, diff)
		}
	}
	wantVolume := corev1.Volume{Name: "kubeflow-trainer-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: "trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llm/status", ExpirationSeconds: ptr.To[int64](3600), Path: "token",
			}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "trainforge-status-ca"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
		},
	}}}
	if diff := cmp.Diff([]corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, wantVolume}, workers.Volumes); diff != "" {
		t.Errorf("trainer volumes (-want +got):\n%s", diff)
	}

	init := info.PodSet("dataset-initializer")
	if len(init.Volumes) != 0 || len(init.Containers[0].Env) != 0 || len(init.Containers[0].VolumeMounts) != 0 {
		t.Errorf("the initializer step was changed: %+v", init)
	}
}

func TestEnforceIsIdempotent(t *testing.T) {
	spec, job := frameworktest.Seed(t, frameworktest.SeedTorch)
	info := frameworktest.NewInfo(t, job, spec)
	p := configured(t)
	if err := p.EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	once, err := info.Copy()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(once, info, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("a second EnforceMLPolicy changed Info (-once +twice):\n%s", diff)
	}
}

func TestDescribeOwnsNoKey(t *testing.T) {
	want := framework.Description{Name: "TrainJobStatus", Version: "v0.1.0"}
	if diff := cmp.Diff(want, New(nil).Describe()); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
}

func TestConfigureRejectsBadArgs(t *testing.T) {
	for _, tc := range []struct {
		args string
		want []string
	}{
		{`{"url":"http://svc:10443","caConfigMapName":"ca","tokenExpirationSeconds":3600}`, []string{`args.url "http://svc:10443"`, "https://<host>"}},
		{`{"url":"https://svc:10443/x","caConfigMapName":"ca","tokenExpirationSeconds":3600}`, []string{"no path"}},
		{`{"url":"https://svc:10443","caConfigMapName":"Bad_Name","tokenExpirationSeconds":3600}`, []string{`args.caConfigMapName "Bad_Name"`}},
		{`{"url":"https://svc:10443","caConfigMapName":"ca","tokenExpirationSeconds":60}`, []string{"args.tokenExpirationSeconds 60", "at least 600"}},
		{`{"url":"https://svc:10443","caConfigMapName":"ca","tokenExpirationSeconds":3600,"port":1}`, []string{"args", `unknown field "port"`, "url, caConfigMapName and tokenExpirationSeconds"}},
	} {
		err := New(nil).(*plugin).Configure(context.Background(), json.RawMessage(tc.args))
		if err == nil {
			t.Errorf("Configure(%s) succeeded, want an error", tc.args)
			continue
		}
		for _, s := range append(tc.want, "plugin TrainJobStatus") {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Configure(%s) = %q, want it to contain %q", tc.args, err, s)
			}
		}
	}
}

func TestConfigureWithoutArgsTakesTheConfigurationDefaults(t *testing.T) {
	p := New(nil).(*plugin)
	if err := p.Configure(context.Background(), nil); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	want := `{"url":"https://trainforge-webhook-service.trainforge-system.svc:10443","caConfigMapName":"trainforge-status-ca","tokenExpirationSeconds":3600}`
	got, _ := json.Marshal(p.args)
	if string(got) != want {
		t.Errorf("args = %s, want %s", got, want)
	}
}

func TestEnforceWithoutTrainerStepChangesNothing(t *testing.T) {
	_, job := frameworktest.Seed(t, frameworktest.SeedPlainML)
	info := &framework.Info{Version: framework.InfoVersion, PodSets: []framework.PodSet{{Name: "x", Containers: []framework.Container{{Name: "x"}}}}}
	if err := configured(t).EnforceMLPolicy(context.Background(), info, job); err != nil {
		t.Fatal(err)
	}
	if len(info.PodSets[0].Containers[0].Env) != 0 || len(info.PodSets[0].Volumes) != 0 {
		t.Errorf("a PodSet outside the trainer step was changed: %+v", info.PodSets[0])
	}
}

// TestConfigureTakesTheHostsStatusEndpoint: the endpoint comes from the
// host's facts (framework.Handle), not from args rewritten for this
// plugin; args the configuration file sets still win.
func TestConfigureTakesTheHostsStatusEndpoint(t *testing.T) {
	host := framework.Host{Status: framework.StatusEndpoint{URL: "https://trainer-hooks.ml-system.svc:8443", CAConfigMapName: "ca-for-progress", TokenExpirationSeconds: 7200}}
	for _, tc := range []struct {
		args, want string
	}{
		{"", `{"url":"https://trainer-hooks.ml-system.svc:8443","caConfigMapName":"ca-for-progress","tokenExpirationSeconds":7200}`},
		{`{"tokenExpirationSeconds":900}`, `{"url":"https://trainer-hooks.ml-system.svc:8443","caConfigMapName":"ca-for-progress","tokenExpirationSeconds":900}`},
	} {
		p := New(host).(*plugin)
		if err := p.Configure(context.Background(), json.RawMessage(tc.args)); err != nil {
			t.Fatalf("Configure(%s): %v", tc.args, err)
		}
		if got, _ := json.Marshal(p.args); string(got) != tc.want {
			t.Errorf("Configure(%s): args = %s, want %s", tc.args, got, tc.want)
		}
	}
}
