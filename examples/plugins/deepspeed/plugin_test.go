// Package deepspeed_test tests the DeepSpeed plugin, a Python program,
// through the controller's own plugin host, the way the controller runs
// it: go-plugin's handshake, mutual TLS, gRPC, and the host's checks of
// every patch and object.
package deepspeed_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/external"
	"github.com/trainforge/trainforge/sdk/sdktest"
)

// python is Debian's interpreter, which sees Debian's python3-grpcio,
// python3-protobuf and python3-cryptography; a python3 first on PATH may
// not.
const python = "/usr/bin/python3"

// entryOptions are the host's options for a configuration entry
// DeepSpeed, as the controller makes them.
func entryOptions(e configv1alpha1.ExternalPlugin) external.Options {
	cfg := configv1alpha1.Defaulted(&configv1alpha1.Configuration{Plugins: []configv1alpha1.PluginConfig{{Name: "DeepSpeed", External: &e}}})
	return external.OptionsFor(cfg, 0, logr.Discard())
}

// start runs plugin.py through the host, or skips the test when Debian's
// Python modules are missing (.ci/run installs them, so CI never skips).
func start(t *testing.T) *external.Plugin {
	t.Helper()
	if out, err := exec.Command(python, "-c", "import grpc, google.protobuf, cryptography").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import grpc, google.protobuf and cryptography (%v: %s); install Debian's python3-grpcio python3-protobuf python3-cryptography",
			python, err, strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	p, err := external.Start(ctx, entryOptions(configv1alpha1.ExternalPlugin{Command: python, Args: []string{"plugin.py"}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); cancel() })
	if err := p.Ready(); err != nil {
		t.Fatalf("the plugin did not start: %v", err)
	}
	return p
}

func cases(t *testing.T) []sdktest.Case {
	var out []sdktest.Case
	for _, name := range []string{"gpus", "nccl"} {
		file := filepath.Join("testdata", name+".yaml")
		out = append(out, sdktest.CaseFromFiles(t, name, file, file))
	}
	return out
}

// TestGolden pins what the plugin makes of each case:
// testdata/<case>.golden.yaml. After an intended change:
//
//	go test ./examples/plugins/deepspeed -run TestGolden -update
func TestGolden(t *testing.T) {
	p := start(t)
	rpc, err := p.RPC()
	if err != nil {
		t.Fatal(err)
	}
	sdktest.GoldenRPC(t, rpc, "testdata", cases(t)...)
}

// TestLauncherEnvironment follows one job through the host, field by
// field: what the trainer container gets, and the hostfile.
func TestLauncherEnvironment(t *testing.T) {
	p := start(t)
	ctx := context.Background()
	c := cases(t)[0]
	info, err := framework.NewInfo(c.Job, c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Client().EnforceMLPolicy(ctx, info, c.Job); err != nil {
		t.Fatal(err)
	}
	if err := framework.RefreshDerived(info, c.Job.Name); err != nil {
		t.Fatal(err)
	}
	ps, ctr, err := info.Trainer()
	if err != nil {
		t.Fatal(err)
	}
	if ps.Count != 3 {
		t.Errorf("trainer pods %d, want the TrainJob's 3", ps.Count)
	}
	wantEnv := []corev1.EnvVar{
		{Name: "DS_HOSTFILE", Value: "/job/hostfile"},
		framework.CompletionIndexEnv("NODE_RANK"),
		{Name: "MASTER_ADDR", Value: "bert-node-0-0.bert"},
		{Name: "MASTER_PORT", Value: "29500"},
	}
	if diff := cmp.Diff(wantEnv, ctr.Env); diff != "" {
		t.Errorf("trainer env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.ContainerPort{{ContainerPort: 29500, Protocol: corev1.ProtocolTCP}}, ctr.Ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.VolumeMount{{Name: "deepspeed-hostfile", MountPath: "/job/hostfile", SubPath: "hostfile", ReadOnly: true}}, ctr.VolumeMounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	wantVolume := corev1.Volume{Name: "deepspeed-hostfile", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "bert-deepspeed-hostfile"}},
	}}
	if diff := cmp.Diff([]corev1.Volume{wantVolume}, ps.Volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}

	objs, err := p.Client().Build(ctx, info, c.Job)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Unstructured.GetKind() != "ConfigMap" || objs[0].Unstructured.GetName() != "bert-deepspeed-hostfile" {
		t.Fatalf("Build = %v, want the ConfigMap bert-deepspeed-hostfile", objs)
	}
	cm := &corev1.ConfigMap{}
	if err := framework.FromUnstructured(objs[0].Unstructured, cm); err != nil {
		t.Fatal(err)
	}
	want := "bert-node-0-0.bert slots=4\nbert-node-0-1.bert slots=4\nbert-node-0-2.bert slots=4\n"
	if got := cm.Data["hostfile"]; got != want {
		t.Errorf("hostfile %q, want %q", got, want)
	}
}

// TestValidateThroughTheHost: field errors cross the wire with their type,
// field, value and detail.
func TestValidateThroughTheHost(t *testing.T) {
	p := start(t)
	c := cases(t)[0]
	c.Job.Spec.Trainer.Env = []corev1.EnvVar{{Name: "MASTER_PORT", Value: "1"}}
	c.Job.Spec.Trainer.NumNodes = ptr.To[int32](2)
	info, err := framework.NewInfo(c.Job, c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	_, errs, err := p.Client().Validate(context.Background(), framework.ValidateRequest{Info: info, NewJob: c.Job})
	if err != nil {
		t.Fatal(err)
	}
	want := "spec.trainer.env[0].name: Forbidden: MASTER_PORT is set by the DeepSpeed plugin, which sets DS_HOSTFILE, NODE_RANK, MASTER_ADDR, MASTER_PORT itself; remove it from spec.trainer.env"
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("field errors %v, want %q", errs, want)
	}
}

// TestSocketMode runs plugin.py on its own, serving on a Unix socket as in
// a container of its own, and connects the host to it.
func TestSocketMode(t *testing.T) {
	start(t) // skips without Debian's modules
	dir, err := os.MkdirTemp("", "ds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "deepspeed.sock")
	cmd := exec.Command(python, "plugin.py")
	cmd.Env = append(os.Environ(), "TRAINFORGE_PLUGIN_SOCKET="+sock)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if _, err := os.Lstat(sock); !os.IsNotExist(err) {
			t.Errorf("the plugin left its socket behind after SIGTERM: %v", err)
		}
	})
	opts := entryOptions(configv1alpha1.ExternalPlugin{Socket: sock, StartTimeout: &metav1.Duration{Duration: 20 * time.Second}})
	opts.Backoff = external.Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	p, err := external.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	deadline := time.Now().Add(30 * time.Second)
	for p.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the host did not connect to the plugin's socket: %v", p.Ready())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("the socket's mode: %v, %v; want 0660", fi.Mode(), err)
	}
	c := cases(t)[0]
	info, err := framework.NewInfo(c.Job, c.Runtime)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Client().EnforceMLPolicy(context.Background(), info, c.Job); err != nil {
		t.Fatalf("EnforceMLPolicy through the socket: %v", err)
	}
}
