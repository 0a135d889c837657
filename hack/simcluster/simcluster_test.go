package simcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/internal/logtail"
)

func TestServingCertIsTrustedFor127001AndLocalhost(t *testing.T) {
	dir := t.TempDir()
	caPEM, err := servingCert(dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatalf("the webhook server could not load the files: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("the CA bundle holds no certificate")
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
			t.Errorf("an API server calling https://%s would refuse the certificate: %v", host, err)
		}
	}
}

func TestReadManifests(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n# nothing\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n"), 0o644)
	objs, err := ReadManifests(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetName() != "a" || objs[1].GetName() != "b" {
		t.Errorf("read %d objects, want namespaces a and b in order", len(objs))
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("apiVersion: v1\nmetadata:\n  name: x\n"), 0o644)
	if _, err := ReadManifests(bad); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("an object without a kind gave %v, want an error naming the file", err)
	}
}

func TestTrainforgeConfigIsValid(t *testing.T) {
	bin := t.TempDir()
	os.Mkdir(filepath.Join(bin, "wasm"), 0o755)
	for _, p := range Plugins {
		switch {
		case p.Wasm:
			os.WriteFile(wasmModule(bin, p), []byte("\x00asm"), 0o644)
		case p.Package != "":
			os.WriteFile(filepath.Join(bin, filepath.Base(p.Package)), []byte("#!/bin/sh\n"), 0o755)
		}
	}
	t.Setenv("TRAINFORGE_CACHE", "/var/cache/trainforge-test")
	text, err := trainforgeConfig(bin, t.TempDir(), 9443, 10443, "127.0.0.1:1", "127.0.0.1:2")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := configv1alpha1.Decode([]byte(text))
	if err != nil {
		t.Fatalf("the controller would refuse its configuration: %v\n%s", err, text)
	}
	var names []string
	for _, p := range cfg.Plugins {
		names = append(names, p.Name)
		if (p.External != nil) != (p.Name == "MPI" || p.Name == "XGBoost") {
			t.Errorf("plugin %s: external %v", p.Name, p.External != nil)
		}
		if p.External != nil && len(p.External.SHA256) != 64 {
			t.Errorf("plugin %s: no checksum", p.Name)
		}
		if (p.Wasm != nil) != (p.Name == "JAX") {
			t.Errorf("plugin %s: wasm %v", p.Name, p.Wasm != nil)
		}
		if p.Wasm != nil && (len(p.Wasm.SHA256) != 64 || !strings.HasSuffix(p.Wasm.Module, ".wasm")) {
			t.Errorf("plugin %s: wasm entry %+v, want a module and its checksum", p.Name, p.Wasm)
		}
	}
	if got := cfg.PluginHost.WasmCacheDir; got != "/var/cache/trainforge-test/wasm" {
		t.Errorf("pluginHost.wasmCacheDir %q, want it beside the cluster binaries' cache", got)
	}
	if got := strings.Join(names, ","); got != "PlainML,Torch,MPI,JAX,XGBoost,JobSet,Coscheduling,TrainJobStatus" {
		t.Errorf("plugins %s", got)
	}
	if p := cfg.StatusServer.Port; p == nil || *p != 10443 {
		t.Errorf("statusServer.port %v, want 10443", p)
	}
	if cm := cfg.Webhook.CertManagement; !cm.Enabled() || len(cm.ExtraDNSNames) != 1 || cm.ExtraDNSNames[0] != "localhost" {
		t.Errorf("certManagement %+v, want it on for localhost", cm)
	}
}

func TestStagesCoverNodesAndPods(t *testing.T) {
	var names []string
	for _, doc := range strings.Split(string(stagesYAML), "\n---\n") {
		var stage struct {
			APIVersion string
			Kind       string
			Metadata   struct{ Name string }
			Spec       struct {
				ResourceRef struct{ Kind string } `json:"resourceRef"`
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &stage); err != nil {
			t.Fatalf("stages.yaml: %v", err)
		}
		if stage.Kind == "" {
			continue // only comments
		}
		if stage.APIVersion != "kwok.x-k8s.io/v1alpha1" || stage.Kind != "Stage" {
			t.Errorf("stages.yaml holds a %s %s", stage.APIVersion, stage.Kind)
		}
		names = append(names, stage.Spec.ResourceRef.Kind+"/"+stage.Metadata.Name)
	}
	// kwokctl uses no default stage once any is given: nodes need theirs.
	want := "Node/node-initialize,Node/node-heartbeat,Pod/pod-start,Pod/pod-succeed,Pod/pod-succeed-after-first-attempt," +
		"Pod/pod-fail,Pod/pod-fail-first-attempt,Pod/pod-evict,Pod/pod-evict-first-attempt,Pod/pod-delete"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("stages %s, want %s", got, want)
	}
}

func TestLockKeepsASecondRunOut(t *testing.T) {
	name := "lock-test-" + strings.ReplaceAll(t.Name(), "/", "-")
	first, err := TryLock(name, "pid 1, the first")
	if err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(name, "pid 2")
	var locked *ErrLocked
	if !errors.As(err, &locked) || locked.Holder != "pid 1, the first" {
		t.Fatalf("second TryLock: %v, want ErrLocked naming the first holder", err)
	}
	first.Update("pid 1, the first, now with its cluster")
	if _, err = TryLock(name, "pid 2"); !errors.As(err, &locked) || locked.Holder != "pid 1, the first, now with its cluster" {
		t.Fatalf("TryLock after Update: %v, want ErrLocked with the new info", err)
	}
	first.Release()
	if _, err := os.Stat(LockPath(name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left after Release: %v", err)
	}
	again, err := TryLock(name, "pid 3")
	if err != nil {
		t.Fatalf("TryLock after Release: %v", err)
	}
	again.Release()
}

// A parent that dies without calling Stop: the watchdog kills the process
// groups it was told of and removes the work directory.
func TestWatchdogCleansUpAfterADeadParent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "work")
	os.MkdirAll(dir, 0o755)
	w, err := startWatchdog("/bin/true", "none", filepath.Join(dir, "kwok"), dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := startProcess("sleep", filepath.Join(t.TempDir(), "sleep.log"), "/bin/sleep", []string{"600"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop(time.Second)
	w.watch(p)
	w.in.Close() // as the parent's death would

	deadline := time.Now().Add(30 * time.Second)
	for {
		done, _ := p.exited()
		_, statErr := os.Stat(dir)
		if done && errors.Is(statErr, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the parent's death: process exited %v, work directory %v", done, statErr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop ends a process and what it started, which shares its group.
func TestStopEndsTheProcessGroup(t *testing.T) {
	p, err := startProcess("sh", filepath.Join(t.TempDir(), "sh.log"), "/bin/sh", []string{"-c", "sleep 600 & echo $!; wait"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var child int
	deadline := time.Now().Add(10 * time.Second)
	for child == 0 && time.Now().Before(deadline) {
		data, _ := os.ReadFile(p.log)
		child, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		time.Sleep(50 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("the shell did not start its child")
	}
	p.stop(5 * time.Second)
	// The child is gone, or a zombie of an exited parent that init reaps.
	for time.Now().Before(deadline) {
		if err := syscall.Kill(child, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		data, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(child), "stat"))
		if strings.Contains(string(data), ") Z ") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("process %d of the stopped group still runs", child)
}

// TestMissingBinaries: a directory of prebuilt binaries (make test-bin and
// make wasm-bin) is used only when it holds everything StartTrainforge
// runs, and what it lacks is named.
func TestMissingBinaries(t *testing.T) {
	bin := t.TempDir()
	all := MissingBinaries(bin)
	if !slices.Contains(all, filepath.Join(bin, "trainforge-controller")) || !slices.Contains(all, filepath.Join(bin, "wasm", "trainforge-plugin-jax.wasm")) ||
		!slices.Contains(all, filepath.Join(bin, "trainforge-plugin-mpi")) {
		t.Fatalf("an empty directory lacks %q, want the controller, the MPI plugin and the JAX module among them", all)
	}
	os.Mkdir(filepath.Join(bin, "wasm"), 0o755)
	for _, f := range all {
		os.WriteFile(f, nil, 0o755)
	}
	if missing := MissingBinaries(bin); len(missing) != 0 {
		t.Errorf("a full directory lacks %q", missing)
	}
}

// A kwokctl that fails says why in its error, not only in a log that a
// failed Start removes with the work directory: its last lines, whether
// it wrote them to stdout or stderr.
func TestKwokctlFailureCarriesItsOutput(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\nseq 1 40\necho 'kube-apiserver: exit status 1' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "kwokctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{opts: Options{Binaries: dir}, Logs: dir, kwokDir: dir}
	err := c.kwokctl(context.Background(), "creating the kwok cluster", "create", "cluster")
	var want strings.Builder
	fmt.Fprintf(&want, "creating the kwok cluster: kwokctl: exit status 1; the end of its output (%s):", filepath.Join(dir, "kwokctl.log"))
	for i := 40 - logtail.Lines + 2; i <= 40; i++ {
		fmt.Fprintf(&want, "\n%d", i)
	}
	want.WriteString("\nkube-apiserver: exit status 1")
	if diff := cmp.Diff(want.String(), fmt.Sprint(err)); diff != "" {
		t.Errorf("kwokctl's error (-want +got):\n%s", diff)
	}
}

// A process that exited says how, with the end of its log, and what says
// why it crashed, which the goroutine dump after it pushes out of the end.
func TestExitedCarriesTheLogsEnd(t *testing.T) {
	log := filepath.Join(t.TempDir(), "jobset-controller.log")
	p, err := startProcess("the JobSet controller", log, "/bin/sh", []string{"-c", "echo 'panic: boom'; seq 1 100; exit 2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	c := &Cluster{procs: []*process{p}}
	var want strings.Builder
	fmt.Fprintf(&want, "the JobSet controller crashed (exit status 2):\npanic: boom\nthe end of its log, %s:", log)
	for i := 100 - logtail.Lines + 1; i <= 100; i++ {
		fmt.Fprintf(&want, "\n%d", i)
	}
	if diff := cmp.Diff(want.String(), fmt.Sprint(c.Exited())); diff != "" {
		t.Errorf("Exited (-want +got):\n%s", diff)
	}
}
