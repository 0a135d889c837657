package simcluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainforge/trainforge/framework/wasm/abi"
	"github.com/trainforge/trainforge/internal/cachedir"
	"github.com/trainforge/trainforge/internal/freeport"
)

// Names of what Trainforge's controller is given in the cluster.
const (
	TrainforgeNamespace = "trainforge-system"
	// TrainforgeWebhookConfiguration is the validating webhook
	// configuration whose caBundle the controller keeps (its default
	// webhook.certManagement.validatingWebhookConfigurationName).
	TrainforgeWebhookConfiguration = "trainforge-validating-webhook-configuration"
)

// A Plugin is one entry of the controller's plugin list.
type Plugin struct {
	Name string
	// Package, for an external or wasm plugin, is its main package,
	// relative to the repository's root; empty for a built-in run in
	// process.
	Package string
	// Wasm runs the plugin of Package compiled to WebAssembly, in the
	// controller's process (wasm:), instead of as a process of its own.
	Wasm bool
}

// How says how the plugin runs: "in process", "process" or "wasm".
func (p Plugin) How() string {
	switch {
	case p.Package == "":
		return "in process"
	case p.Wasm:
		return "wasm"
	}
	return "process"
}

// Plugins are the plugins the demo and the e2e suite run, in
// configuration order: the built-ins in the controller's process, the
// vendor-style plugins each in a process of its own or as a WebAssembly
// module, as a cluster operator would install them.
var Plugins = []Plugin{
	{Name: "PlainML"},
	{Name: "Torch"},
	{Name: "MPI", Package: "cmd/trainforge-plugin-mpi"},
	{Name: "JAX", Package: "cmd/trainforge-plugin-jax", Wasm: true},
	{Name: "XGBoost", Package: "cmd/trainforge-plugin-xgboost"},
	{Name: "JobSet"},
	{Name: "Coscheduling"},
	{Name: "TrainJobStatus"},
}

// Trainforge is Trainforge's controller, running against the cluster.
type Trainforge struct {
	// ConfigFile is its configuration file, Log its log.
	ConfigFile, Log string
	// Bin holds the binaries built for it.
	Bin string
	// StatusAddr is where its status endpoint listens, MetricsAddr its
	// /metrics (host:port). Pods would reach the endpoint through its
	// Service; the simulated cluster has no Service network.
	StatusAddr, MetricsAddr string
}

// BuildTrainforge builds the controller and the external plugins into
// bin, and the wasm plugins into bin/wasm/<package's base>.wasm as make
// wasm-bin does, with the Go toolchain, from the repository.
func BuildTrainforge(ctx context.Context, repoRoot, bin string) error {
	pkgs := []string{"./cmd/trainforge-controller"}
	for _, p := range Plugins {
		if p.Package != "" && !p.Wasm {
			pkgs = append(pkgs, "./"+p.Package)
		}
	}
	if err := goBuild(ctx, repoRoot, nil, append([]string{"-o", bin + "/"}, pkgs...)); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(bin, "wasm"), 0o755); err != nil {
		return err
	}
	for _, p := range Plugins {
		if p.Wasm {
			err := goBuild(ctx, repoRoot, []string{"GOOS=wasip1", "GOARCH=wasm"},
				append(abi.GoBuildFlags(), "-o", wasmModule(bin, p), "./"+p.Package))
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func goBuild(ctx context.Context, repoRoot string, env, args []string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build"}, args...)...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s go build %s: %w\n%s", strings.Join(env, " "), strings.Join(args, " "), err, out.String())
	}
	return nil
}

// wasmModule is where BuildTrainforge and make wasm-bin write plugin p's
// module.
func wasmModule(bin string, p Plugin) string {
	return filepath.Join(bin, "wasm", filepath.Base(p.Package)+".wasm")
}

// MissingBinaries lists what of bin StartTrainforge needs and does not
// find: the controller, each external plugin and each wasm module, as
// BuildTrainforge (or make test-bin and make wasm-bin) write them.
func MissingBinaries(bin string) []string {
	want := []string{filepath.Join(bin, "trainforge-controller")}
	for _, p := range Plugins {
		switch p.How() {
		case "process":
			want = append(want, filepath.Join(bin, filepath.Base(p.Package)))
		case "wasm":
			want = append(want, wasmModule(bin, p))
		}
	}
	var missing []string
	for _, f := range want {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	return missing
}

// StartTrainforge starts Trainforge's controller from the binaries of bin
// (BuildTrainforge), with its webhooks on and a certificate it makes
// itself, and returns once it is ready and the API server trusts its
// webhooks.
func (c *Cluster) StartTrainforge(ctx context.Context, bin string) (*Trainforge, error) {
	t := &Trainforge{
		ConfigFile: filepath.Join(c.opts.Dir, "trainforge-config.yaml"),
		Log:        filepath.Join(c.Logs, "trainforge-controller.log"),
		Bin:        bin,
	}
	ports := make([]int, 4)
	for i := range ports {
		var err error
		if ports[i], err = freeport.Port(); err != nil {
			return nil, err
		}
	}
	webhookPort, probeAddr, metricsAddr := ports[0], "127.0.0.1:"+strconv.Itoa(ports[1]), "127.0.0.1:"+strconv.Itoa(ports[2])
	t.StatusAddr, t.MetricsAddr = "127.0.0.1:"+strconv.Itoa(ports[3]), metricsAddr
	config, err := trainforgeConfig(bin, filepath.Join(c.opts.Dir, "trainforge"), webhookPort, ports[3], probeAddr, metricsAddr)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(t.ConfigFile, []byte(config), 0o644); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: TrainforgeNamespace}}
	if err := c.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", TrainforgeNamespace, err)
	}
	if err := c.registerTrainforgeWebhooks(ctx, webhookPort); err != nil {
		return nil, err
	}
	p, err := startProcess("Trainforge's controller", t.Log, filepath.Join(bin, "trainforge-controller"),
		[]string{"--config", t.ConfigFile, "--kubeconfig", c.Kubeconfig}, nil)
	if err != nil {
		return nil, err
	}
	c.track(p)
	// Ready means: every plugin started and described itself, and the
	// webhook certificate is made and served. A wasm module is compiled
	// first: 15-20 s on 2 idle cores the first time, minutes on busy ones.
	if err := c.waitReady(ctx, p, "http://"+probeAddr+"/readyz", 6*time.Minute); err != nil {
		return nil, err
	}
	err = poll(ctx, time.Minute, "Trainforge's controller to write its CA into "+TrainforgeWebhookConfiguration, func() error {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Client.Get(ctx, client.ObjectKey{Name: TrainforgeWebhookConfiguration}, vwc); err != nil {
			return err
		}
		for _, w := range vwc.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return fmt.Errorf("webhook %s has no caBundle yet", w.Name)
			}
		}
		return nil
	})
	return t, err
}

// trainforgeConfig is the controller's configuration file: the plugins of
// Plugins, each external one checked against the SHA-256 of its binary
// and each wasm one against its module's,
// and the webhook certificate managed by the controller for localhost,
// where the API server reaches it.
func trainforgeConfig(bin, dir string, webhookPort, statusPort int, probeAddr, metricsAddr string) (string, error) {
	var b strings.Builder
	b.WriteString("apiVersion: config.trainforge.dev/v1alpha1\nkind: Configuration\nplugins:\n")
	for _, p := range Plugins {
		fmt.Fprintf(&b, "- name: %s\n", p.Name)
		if p.Package == "" {
			continue
		}
		file, kind := filepath.Join(bin, filepath.Base(p.Package)), "external:\n    command"
		if p.Wasm {
			file, kind = wasmModule(bin, p), "wasm:\n    module"
		}
		sum, err := fileSHA256(file)
		if err != nil {
			return "", fmt.Errorf("plugin %s: %w", p.Name, err)
		}
		fmt.Fprintf(&b, "  %s: %s\n    sha256: %s\n", kind, file, sum)
	}
	cacheDir, err := wasmCacheDir()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, `pluginHost:
  socketDir: %s
  wasmCacheDir: %s
metrics:
  bindAddress: %s
health:
  healthProbeBindAddress: %s
webhook:
  port: %d
  certDir: %s
  certManagement:
    namespace: %s
    extraDNSNames: [localhost]
statusServer:
  port: %d
`, filepath.Join(dir, "sockets"), cacheDir, metricsAddr, probeAddr, webhookPort, filepath.Join(dir, "certs"), TrainforgeNamespace, statusPort)
	return b.String(), os.MkdirAll(filepath.Join(dir, "sockets"), 0o700)
}

// wasmCacheDir is where the controller keeps the machine code of the
// wasm modules between runs (pluginHost.wasmCacheDir), beside the cluster's
// binaries: only the first run compiles a module.
func wasmCacheDir() (string, error) {
	root, err := cachedir.Root()
	if err != nil {
		return "", fmt.Errorf("the wasm plugins' compilation cache: %w", err)
	}
	return filepath.Join(root, "wasm"), nil
}

func fileSHA256(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// registerTrainforgeWebhooks registers the generated webhook configuration
// (config/webhook/manifests.yaml) reaching the controller at
// https://localhost:port, without a CA: the controller writes it.
func (c *Cluster) registerTrainforgeWebhooks(ctx context.Context, port int) error {
	path := filepath.Join(c.opts.RepoRoot, "config", "webhook", "manifests.yaml")
	objs, err := ReadManifests(path)
	if err != nil {
		return err
	}
	base := "https://" + net.JoinHostPort("localhost", strconv.Itoa(port))
	for _, u := range objs {
		if u.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := fromUnstructured(u, vwc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		vwc.Name = TrainforgeWebhookConfiguration
		for i := range vwc.Webhooks {
			cc := urlClientConfig(base, vwc.Webhooks[i].ClientConfig, nil)
			cc.CABundle = nil
			vwc.Webhooks[i].ClientConfig = cc
			vwc.Webhooks[i].TimeoutSeconds = ptr.To[int32](10)
		}
		if err := c.Client.Create(ctx, vwc); err != nil {
			return fmt.Errorf("registering %s: %w", vwc.Name, err)
		}
		return nil
	}
	return fmt.Errorf("%s has no ValidatingWebhookConfiguration", path)
}
