package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControllerUser is the user every measured controller runs as (the floor's
// client too); the audit log records this user's requests only.
const ControllerUser = "load-controller"

// auditPolicy records the requests of users (at Metadata level: verb,
// resource, status code; no bodies) and nothing else, so that the audit
// log costs the API server as little as possible.
func auditPolicy(users []string) string {
	quoted := make([]string, len(users))
	for i, u := range users {
		quoted[i] = strconv.Quote(u)
	}
	return `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: [` + strings.Join(quoted, ", ") + `]
- level: None
`
}

// cluster is one kube-apiserver and etcd with the CRDs installed.
type Cluster struct {
	Env *envtest.Environment
	// admin is the submitters' config (the envtest admin, not audited).
	Admin *rest.Config
	// kubeconfig is the controller user's kubeconfig file.
	Kubeconfig string
	// controllerConfig is the same user's rest.Config.
	ControllerConfig *rest.Config
	AuditLog         string
	// Kubeconfigs are the kubeconfig files of the extra users, by name.
	Kubeconfigs map[string]string
	// server are the pids of kube-apiserver and etcd.
	Server []int
}

// ServerCPU is the CPU time the API server and etcd have used so far.
func (c *Cluster) ServerCPU() time.Duration { return CPUOf(c.Server) }

// ModuleDir returns where the Go module cache holds a dependency, so that
// the CRDs come from the versions the code compiles against.
func ModuleDir(path string) (string, error) {
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

// CRDPaths are the CRDs every row installs.
func CRDPaths(repoRoot string) ([]string, error) {
	jobset, err := ModuleDir("sigs.k8s.io/jobset")
	if err != nil {
		return nil, err
	}
	sp, err := ModuleDir("sigs.k8s.io/scheduler-plugins")
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(repoRoot, "config", "crd", "bases"),
		filepath.Join(jobset, "config", "components", "crd", "bases"),
		filepath.Join(sp, "manifests", "coscheduling", "crd.yaml"),
	}, nil
}

// StartCluster starts a fresh API server and etcd in dir. The controller
// user, and each of extraUsers (members of system:masters too, with their
// kubeconfig in Kubeconfigs), are audited.
func StartCluster(dir string, crds []string, extraUsers ...string) (*Cluster, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run `make bench-load`, or set it to the directory hack/envtest.sh prints")
	}
	c := &Cluster{AuditLog: filepath.Join(dir, "audit.log")}
	// kube-apiserver appends to an audit log that exists (from an earlier
	// run with the same -out).
	if err := os.Remove(c.AuditLog); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy(append([]string{ControllerUser}, extraUsers...))), 0o600); err != nil {
		return nil, err
	}
	c.Env = &envtest.Environment{
		CRDDirectoryPaths:        crds,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		// envtest's default, 10 s, is too short on a busy shared machine.
		CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: 2 * time.Minute},
	}
	api := c.Env.ControlPlane.GetAPIServer()
	// A directory of our own keeps the serving certificates (and so the
	// CA in every kubeconfig) across RestartAPIServer; envtest resets a
	// directory it made itself.
	// It starts empty: envtest makes the certificates (and learns their
	// CA) only when the directory has none, as after an earlier run with
	// the same -out.
	api.CertDir = filepath.Join(dir, "apiserver")
	if err := os.RemoveAll(api.CertDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(api.CertDir, 0o700); err != nil {
		return nil, err
	}
	api.Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", c.AuditLog).
		Set("audit-log-format", "json").
		// Batched, so that the audit log does not slow down each request.
		Set("audit-log-mode", "batch").
		Set("audit-log-maxsize", "0")
	var err error
	if c.Admin, err = c.Env.Start(); err != nil {
		// A start that failed after the control plane came up (the CRDs
		// or the default namespace too slow to appear) leaves etcd and
		// kube-apiserver running.
		if stopErr := c.Env.Stop(); stopErr != nil {
			fmt.Fprintln(os.Stderr, "load: stopping the API server after a failed start:", stopErr)
		}
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	c.Admin.QPS, c.Admin.Burst = -1, 0
	// envtest's processes are the only kube-apiserver and etcd below the
	// harness: earlier rows' are stopped.
	c.Server = ChildrenNamed("kube-apiserver", "etcd")
	user, err := c.Env.AddUser(envtest.User{Name: ControllerUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		c.Stop()
		return nil, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		c.Stop()
		return nil, err
	}
	c.Kubeconfig = filepath.Join(dir, "controller.kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, kc, 0o600); err != nil {
		c.Stop()
		return nil, err
	}
	c.Kubeconfigs = map[string]string{}
	for _, name := range extraUsers {
		u, err := c.Env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
		if err != nil {
			c.Stop()
			return nil, err
		}
		data, err := u.KubeConfig()
		if err != nil {
			c.Stop()
			return nil, err
		}
		path := filepath.Join(dir, name+".kubeconfig")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			c.Stop()
			return nil, err
		}
		c.Kubeconfigs[name] = path
	}
	c.ControllerConfig = rest.CopyConfig(user.Config())
	c.ControllerConfig.QPS, c.ControllerConfig.Burst = -1, 0
	return c, nil
}

// RestartAPIServer stops kube-apiserver, keeps it down for down, and
// starts it again on the same port, with the same certificates, users and
// etcd. It is asked to stop with SIGTERM, as a rolling update of the
// control plane does, and killed when it has not exited after grace (with
// watches open, kube-apiserver can take a minute to drain). Clients see
// their watches end and their requests refused until it is back. It
// returns how the old process ended.
func (c *Cluster) RestartAPIServer(grace, down time.Duration) (string, error) {
	pids := ChildrenNamed("kube-apiserver")
	if len(pids) != 1 {
		return "", fmt.Errorf("want one kube-apiserver below the harness, found %v", pids)
	}
	how := "exited after SIGTERM"
	_ = syscall.Kill(pids[0], syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for alive(pids[0]) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(pids[0]) {
		how = fmt.Sprintf("killed (SIGKILL) %v after SIGTERM", grace)
		_ = syscall.Kill(pids[0], syscall.SIGKILL)
	}
	api := c.Env.ControlPlane.GetAPIServer()
	// envtest reaps the process and sees it has exited.
	if err := api.Stop(); err != nil {
		return how, fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	time.Sleep(down)
	if err := api.Start(); err != nil {
		return how, fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	c.Server = ChildrenNamed("kube-apiserver", "etcd")
	return how, nil
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	f, ok := procStat(pid)
	return ok && len(f) > 0 && f[0] != "Z"
}

// Stop stops the API server and etcd; the API server flushes its audit log
// as it stops.
func (c *Cluster) Stop() {
	if err := c.Env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "load: stopping the API server:", err)
	}
}

// RepoRoot is the module's root, found from the working directory: the
// harness reads the CRDs there.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "config", "crd", "bases")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("run the harness inside the repository (no config/crd/bases above %s)", dir)
		}
	}
}
