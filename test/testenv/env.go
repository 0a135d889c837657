package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options say what an API server has beyond kube-apiserver and etcd.
type Options struct {
	// CRDs are the CRD files or directories to install; nil means
	// CRDPaths (Trainforge's, JobSet's, PodGroup's).
	CRDs []string
	// NoCRDs installs none (CRDs is then ignored): for tests that apply
	// an install, which brings its own.
	NoCRDs bool
	// ExtraCRDs are installed beside CRDs.
	ExtraCRDs []string
	// Webhooks installs the controller's admission webhooks (config/webhook)
	// pointing at a local port with a serving certificate envtest makes;
	// Env.WebhookInstallOptions says where the controller must serve them.
	Webhooks bool
	// CertDir, when set, is where kube-apiserver keeps its serving
	// certificates, emptied first, so that they (and the CA in every
	// kubeconfig) survive a restart of kube-apiserver alone; envtest
	// resets a directory it made itself.
	CertDir string
	// APIServerFlags are extra kube-apiserver flags (an audit policy, for
	// example).
	APIServerFlags map[string]string
}

// Env is a running kube-apiserver and etcd. Its Config (envtest's) is an
// admin's (system:masters), with no client-side rate limit.
type Env struct {
	*envtest.Environment
}

// How long the control plane and the CRDs may take: envtest's defaults
// (20 s to start, 10 s for the CRDs) are too short on a busy shared
// machine.
const (
	startTimeout = 2 * time.Minute
	stopTimeout  = time.Minute
	crdTimeout   = 2 * time.Minute
)

// Start starts kube-apiserver and etcd with what o asks for; the caller
// stops them with Stop. It fails, naming the command that fixes it, when
// kube-apiserver and etcd are not built (Assets).
func Start(o Options) (*Env, error) {
	assetsDir, err := Assets()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assetsDir,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: crdTimeout},
	}
	if !o.NoCRDs {
		crds := o.CRDs
		if crds == nil {
			if crds, err = CRDPaths(); err != nil {
				return nil, err
			}
		}
		env.CRDDirectoryPaths = append(append([]string(nil), crds...), o.ExtraCRDs...)
	}
	if o.Webhooks {
		manifests, err := Path("config", "webhook")
		if err != nil {
			return nil, err
		}
		env.WebhookInstallOptions.Paths = []string{manifests}
	}
	api := env.ControlPlane.GetAPIServer()
	if o.CertDir != "" {
		// It starts empty: envtest makes the certificates (and learns
		// their CA) only when the directory has none.
		if err := os.RemoveAll(o.CertDir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(o.CertDir, 0o700); err != nil {
			return nil, err
		}
		api.CertDir = o.CertDir
	}
	for k, v := range o.APIServerFlags {
		api.Configure().Set(k, v)
	}
	cfg, err := env.Start()
	if err != nil {
		// A start that failed after the control plane came up (the CRDs
		// too slow to appear, say) leaves etcd and kube-apiserver running.
		return nil, errors.Join(fmt.Errorf("starting kube-apiserver and etcd (envtest, from %s): %w", assetsDir, err), env.Stop())
	}
	cfg.QPS, cfg.Burst = -1, 0
	return &Env{Environment: env}, nil
}

// Stop stops kube-apiserver and etcd.
func (e *Env) Stop() error { return e.Environment.Stop() }

// AddUser adds a user of groups (system:masters makes it an admin) and
// writes its kubeconfig to path. It returns the user's rest.Config, with
// no client-side rate limit.
func (e *Env) AddUser(path, name string, groups ...string) (*rest.Config, error) {
	u, err := e.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	data, err := u.KubeConfig()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(u.Config())
	cfg.QPS, cfg.Burst = -1, 0
	return cfg, nil
}

// AdminKubeconfig writes the kubeconfig of an admin (a system:masters
// user) into dir/kubeconfig and returns its path: for a controller run as
// a process.
func (e *Env) AdminKubeconfig(dir string) (string, error) {
	path := filepath.Join(dir, "kubeconfig")
	_, err := e.AddUser(path, "trainforge-admin", "system:masters")
	return path, err
}
