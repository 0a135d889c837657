package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// controllerUser is the user every measured controller runs as (the floor's
// client too); the audit log records this user's requests only.
const controllerUser = "load-controller"

// auditPolicy records the controller user's requests at Metadata level
// (verb, resource, status code; no bodies) and nothing else, so that the
// audit log costs the API server as little as possible.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + controllerUser + `"]
- level: None
`

// cluster is one kube-apiserver and etcd with the CRDs installed.
type cluster struct {
	env *envtest.Environment
	// admin is the submitters' config (the envtest admin, not audited).
	admin *rest.Config
	// kubeconfig is the controller user's kubeconfig file.
	kubeconfig string
	// controllerConfig is the same user's rest.Config.
	controllerConfig *rest.Config
	auditLog         string
	// server are the pids of kube-apiserver and etcd.
	server []int
}

// serverCPU is the CPU time the API server and etcd have used so far.
func (c *cluster) serverCPU() time.Duration { return cpuOf(c.server) }

// moduleDir returns where the Go module cache holds a dependency, so that
// the CRDs come from the versions the code compiles against.
func moduleDir(path string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", path, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not downloaded; run go mod download", path)
	}
	return dir, nil
}

// crdPaths are the CRDs every row installs.
func crdPaths(repoRoot string) ([]string, error) {
	jobset, err := moduleDir("sigs.k8s.io/jobset")
	if err != nil {
		return nil, err
	}
	sp, err := moduleDir("sigs.k8s.io/scheduler-plugins")
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(repoRoot, "config", "crd", "bases"),
		filepath.Join(jobset, "config", "components", "crd", "bases"),
		filepath.Join(sp, "manifests", "coscheduling", "crd.yaml"),
	}, nil
}

// startCluster starts a fresh API server and etcd in dir.
func startCluster(dir string, crds []string) (*cluster, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run `make bench-load`, or set it to the directory hack/envtest.sh prints")
	}
	c := &cluster{auditLog: filepath.Join(dir, "audit.log")}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	c.env = &envtest.Environment{
		CRDDirectoryPaths:        crds,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	api := c.env.ControlPlane.GetAPIServer()
	api.Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", c.auditLog).
		Set("audit-log-format", "json").
		// Batched, so that the audit log does not slow down each request.
		Set("audit-log-mode", "batch").
		Set("audit-log-maxsize", "0")
	var err error
	if c.admin, err = c.env.Start(); err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	c.admin.QPS, c.admin.Burst = -1, 0
	// envtest's processes are the only kube-apiserver and etcd below the
	// harness: earlier rows' are stopped.
	c.server = childrenNamed("kube-apiserver", "etcd")
	user, err := c.env.AddUser(envtest.User{Name: controllerUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		c.stop()
		return nil, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		c.stop()
		return nil, err
	}
	c.kubeconfig = filepath.Join(dir, "controller.kubeconfig")
	if err := os.WriteFile(c.kubeconfig, kc, 0o600); err != nil {
		c.stop()
		return nil, err
	}
	c.controllerConfig = rest.CopyConfig(user.Config())
	c.controllerConfig.QPS, c.controllerConfig.Burst = -1, 0
	return c, nil
}

// stop stops the API server and etcd; the API server flushes its audit log
// as it stops.
func (c *cluster) stop() {
	if err := c.env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "load: stopping the API server:", err)
	}
}
