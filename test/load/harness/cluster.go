package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/trainforge/trainforge/test/testenv"
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

// Cluster is one kube-apiserver and etcd with the CRDs installed.
type Cluster struct {
	Env *testenv.Env
	// Admin is the submitters' config (the envtest admin, not audited).
	Admin *rest.Config
	// Kubeconfig is the controller user's kubeconfig file.
	Kubeconfig string
	// ControllerConfig is the same user's rest.Config.
	ControllerConfig *rest.Config
	AuditLog         string
	// Kubeconfigs are the kubeconfig files of the extra users, by name.
	Kubeconfigs map[string]string
	// Server are the pids of kube-apiserver and etcd.
	Server []int
}

// ServerCPU is the CPU time the API server and etcd have used so far.
func (c *Cluster) ServerCPU() time.Duration { return CPUOf(c.Server) }

// StartCluster starts a fresh API server and etcd in dir, with the CRDs
// of testenv.CRDPaths. The controller user, and each of extraUsers
// (members of system:masters too, with their kubeconfig in Kubeconfigs),
// are audited.
func StartCluster(dir string, extraUsers ...string) (*Cluster, error) {
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
	var err error
	c.Env, err = testenv.Start(testenv.Options{
		// Certificates of our own keep the CA in every kubeconfig valid
		// across RestartAPIServer.
		CertDir: filepath.Join(dir, "apiserver"),
		APIServerFlags: map[string]string{
			"audit-policy-file": policy,
			"audit-log-path":    c.AuditLog,
			"audit-log-format":  "json",
			// Batched, so that the audit log does not slow down each
			// request.
			"audit-log-mode":    "batch",
			"audit-log-maxsize": "0",
		},
	})
	if err != nil {
		return nil, err
	}
	c.Admin = c.Env.Config
	// envtest's processes are the only kube-apiserver and etcd below the
	// harness: earlier rows' are stopped.
	c.Server = ChildrenNamed("kube-apiserver", "etcd")
	c.Kubeconfig = filepath.Join(dir, "controller.kubeconfig")
	if c.ControllerConfig, err = c.Env.AddUser(c.Kubeconfig, ControllerUser, "system:masters"); err != nil {
		c.Stop()
		return nil, err
	}
	c.Kubeconfigs = map[string]string{}
	for _, name := range extraUsers {
		path := filepath.Join(dir, name+".kubeconfig")
		if _, err := c.Env.AddUser(path, name, "system:masters"); err != nil {
			c.Stop()
			return nil, err
		}
		c.Kubeconfigs[name] = path
	}
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
