// Package operator assembles the controller manager: scheme, framework,
// TrainJob reconciler, webhooks, metrics and probes. cmd/trainforge-controller
// and the integration tests start the same manager through it.
package operator

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/cacheomit"
	"github.com/trainforge/trainforge/internal/controller"
	"github.com/trainforge/trainforge/internal/goodput"
	"github.com/trainforge/trainforge/internal/statusserver"
	"github.com/trainforge/trainforge/internal/webhook"
)

// ControllerName names the controller in Events and field managers.
const ControllerName = "trainforge-controller"

// Options are what the manager is built from.
type Options struct {
	// Config is the loaded, defaulted and validated configuration file.
	Config *configv1alpha1.Configuration
	// Framework runs the plugins the configuration enables (NewFramework).
	Framework *frameworkruntime.Framework
	// PluginKinds registers the Go types of kinds that in-process plugins
	// build (builtin.AddToScheme: JobSet, PodGroup), which the controller
	// then reads typed: decoding and copying a typed object costs a
	// fraction of an unstructured one. Every other kind a plugin builds or
	// watches is read unstructured. Nil: only the controller's own kinds.
	PluginKinds func(*runtime.Scheme) error
	// EnableWebhooks serves the admission webhooks.
	EnableWebhooks bool
	// WebhookHost is the address the webhook server binds; empty for all.
	WebhookHost string
	// PprofBindAddress serves Go's pprof handlers when set (off by
	// default: profiles are for diagnosis, and expose the process).
	PprofBindAddress string
	// Reload, when set, applies changes of the configuration file while
	// the controller runs; its Plugins must be the ones behind Framework.
	Reload *ReloadOptions
}

// ReloadOptions say how the controller follows its configuration file.
type ReloadOptions struct {
	// Path is the configuration file.
	Path string
	// Load reads and checks it as at start-up, flag overrides included.
	Load func(path string) (*configv1alpha1.Configuration, error)
	// Plugins is the plugin set to change.
	Plugins *Plugins
}

func init() {
	ctrlmetrics.Registry.MustRegister(frameworkruntime.Collectors()...)
	ctrlmetrics.Registry.MustRegister(statusserver.Collectors()...)
}

// NewScheme returns a scheme with the controller's own kinds (Kubernetes'
// built-in kinds and Trainforge's), and the kinds that plugins register
// (Options.PluginKinds).
func NewScheme(pluginKinds ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme, trainer.AddToScheme}, pluginKinds...) {
		if add == nil {
			continue
		}
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// builtOnly restricts the cache of each kind to the objects Trainforge
// built (they carry its managed-by label). A plugin that builds Secrets or
// ConfigMaps (MPI's SSH key and hostfile) makes the controller watch those
// kinds; without this it would hold every Secret and ConfigMap of the
// cluster in memory, which it has no use for and should not read.
func builtOnly(kinds ...client.Object) map[client.Object]cache.ByObject {
	selector := labels.SelectorFromSet(labels.Set{framework.ManagedByLabel: framework.ManagedByValue})
	out := make(map[client.Object]cache.ByObject, len(kinds))
	for _, k := range kinds {
		out[k] = cache.ByObject{Label: selector}
	}
	return out
}

// cachedByObject is the cache's per-kind configuration: built Secrets and
// ConfigMaps only, and TrainJobs sharing their runtime snapshots. What of
// the kinds plugins build the cache keeps is theirs to say
// (framework.WatchSource.Omit, applied by the default transform).
func cachedByObject() map[client.Object]cache.ByObject {
	out := builtOnly(&corev1.Secret{}, &corev1.ConfigMap{})
	out[&trainer.TrainJob{}] = cache.ByObject{Transform: newSnapshotInterner().Transform}
	return out
}

// ClientConfig returns restConfig with the client settings of the
// configuration file. The controller applies them to every rest.Config,
// however it was found (--kubeconfig, $KUBECONFIG, in-cluster), so that
// the client behaves the same whichever way the cluster is given: client-go
// would otherwise fall back to 5 requests a second for a config without
// a rate.
func ClientConfig(restConfig *rest.Config, cfg *configv1alpha1.Configuration) *rest.Config {
	cfg = configv1alpha1.Defaulted(cfg)
	out := rest.CopyConfig(restConfig)
	out.QPS = *cfg.ClientConnection.QPS
	out.Burst = int(*cfg.ClientConnection.Burst)
	if out.QPS < 0 {
		out.RateLimiter = nil
	}
	if out.UserAgent == "" {
		out.UserAgent = ControllerName
	}
	return out
}

// NewManager builds the manager with the reconciler, the webhooks (when
// enabled), metrics and probes. restConfig gets the client settings of
// the configuration (ClientConfig).
func NewManager(ctx context.Context, restConfig *rest.Config, opts Options) (ctrl.Manager, error) {
	cfg := configv1alpha1.Defaulted(opts.Config)
	restConfig = ClientConfig(restConfig, cfg)
	scheme, err := NewScheme(opts.PluginKinds)
	if err != nil {
		return nil, err
	}
	omissions := cacheomit.New(scheme)
	fw := opts.Framework
	mgrOpts := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: cfg.Metrics.BindAddress},
		HealthProbeBindAddress:  cfg.Health.HealthProbeBindAddress,
		LeaderElection:          *cfg.LeaderElection.LeaderElect,
		LeaderElectionID:        cfg.LeaderElection.ResourceName,
		LeaderElectionNamespace: cfg.LeaderElection.ResourceNamespace,
		PprofBindAddress:        opts.PprofBindAddress,
		// Built objects are read as unstructured; serve them from the cache
		// that the watches fill instead of the API server.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Cache: cache.Options{
			ByObject: cachedByObject(),
			// Nothing reads managedFields; without them every cached
			// object is about half the size, and decoding and deep
			// copies cost as much less. The plugins' watches add what
			// else of their kinds may go.
			DefaultTransform: omissions.Transform,
		},
	}
	manageCerts := opts.EnableWebhooks && cfg.Webhook.CertManagement.Enabled()
	certDir := cfg.Webhook.CertDir
	if certDir == "" {
		certDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	cert := &servingCert{}
	if opts.EnableWebhooks {
		wopts := ctrlwebhook.Options{
			Host:    opts.WebhookHost,
			Port:    *cfg.Webhook.Port,
			CertDir: certDir,
		}
		if manageCerts {
			wopts.TLSOpts = []func(*tls.Config){cert.tlsOption}
		}
		mgrOpts.WebhookServer = ctrlwebhook.NewServer(wopts)
	}
	mgr, err := ctrl.NewManager(restConfig, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	r := &controller.TrainJobReconciler{
		Client:    mgr.GetClient(),
		Framework: fw,
		Recorder:  mgr.GetEventRecorder(ControllerName),
		Clock:     clock.RealClock{},

		CacheOmissions: omissions,
		Workers:        int(*cfg.Controller.Workers),

		PerTrainJobMetrics: cfg.Metrics.PerTrainJob,
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return nil, fmt.Errorf("setting up the TrainJob controller: %w", err)
	}
	if rl := opts.Reload; rl != nil {
		if err := mgr.Add(&ConfigWatcher{
			Path:     rl.Path,
			Load:     rl.Load,
			Applied:  cfg,
			Plugins:  rl.Plugins,
			Recorder: mgr.GetEventRecorder(ControllerName),
			OnApplied: func(ctx context.Context) {
				// A removed plugin's TrainJobs get the condition of a key
				// no plugin owns, a new plugin's get their objects.
				if err := r.RequeueAll(ctx); err != nil {
					ctrl.LoggerFrom(ctx).Error(err, "reconciling every TrainJob after a configuration reload")
				}
			},
		}); err != nil {
			return nil, err
		}
	}
	ready := healthz.Ping
	if opts.EnableWebhooks {
		if err := webhook.Setup(mgr, fw); err != nil {
			return nil, err
		}
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if manageCerts {
		if err := addCertRotator(ctx, mgr, cfg, certDir, cert); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("webhook-certificate", cert.ready); err != nil {
			return nil, err
		}
	}
	if opts.EnableWebhooks && cfg.StatusServer.Enabled() {
		if err := addStatusServer(mgr, cfg, opts.WebhookHost, certDir, manageCerts, cert); err != nil {
			return nil, err
		}
	}
	progress := &statusserver.ProgressMetrics{Client: mgr.GetClient(), MaxMetrics: int(*cfg.StatusServer.MaxMetricsPerTrainJob)}
	if err := progress.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the progress metrics: %w", err)
	}
	if err := (&goodput.Controller{Client: mgr.GetClient()}).SetupWithManager(mgr, ctrlmetrics.Registry); err != nil {
		return nil, fmt.Errorf("setting up the goodput account: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ready", ready); err != nil {
		return nil, err
	}
	// A plugin with failure policy Fail that is not running fails every
	// job it takes part in: the controller is not ready without it.
	if err := mgr.AddReadyzCheck("plugins", func(*http.Request) error { return fw.Current().Ready() }); err != nil {
		return nil, err
	}
	return mgr, nil
}

// addStatusServer serves the status endpoint on every replica, with the
// webhook server's certificate, and keeps the CA ConfigMap of each
// namespace with TrainJobs (on the leader).
func addStatusServer(mgr ctrl.Manager, cfg *configv1alpha1.Configuration, host, certDir string, manageCerts bool, cert *servingCert) error {
	getCertificate := cert.getCertificate
	if !manageCerts {
		// cert-manager, or another, keeps the files in certDir.
		w, err := certwatcher.New(filepath.Join(certDir, certFile), filepath.Join(certDir, keyFile))
		if err != nil {
			return fmt.Errorf("status server (statusServer): reading the webhook serving certificate in %s: %w", certDir, err)
		}
		if err := mgr.Add(everyReplica{w}); err != nil {
			return err
		}
		getCertificate = w.GetCertificate
	}
	srv, err := statusserver.New(statusserver.Options{
		Addr:              net.JoinHostPort(host, strconv.Itoa(int(*cfg.StatusServer.Port))),
		GetCertificate:    getCertificate,
		Client:            mgr.GetClient(),
		Reader:            mgr.GetAPIReader(),
		MinUpdateInterval: cfg.StatusServer.MinUpdateInterval.Duration,
		Log:               ctrl.Log.WithName("status-server"),
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(srv); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("status-server", srv.Started); err != nil {
		return err
	}
	publisher := &statusserver.CAPublisher{
		Client:        mgr.GetClient(),
		CAFile:        filepath.Join(certDir, caFile),
		ConfigMapName: cfg.StatusServer.CAConfigMapName,
	}
	if err := publisher.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the status endpoint's CA ConfigMaps: %w", err)
	}
	return nil
}

// everyReplica runs a runnable on every replica, leader or not.
type everyReplica struct{ manager.Runnable }

func (everyReplica) NeedLeaderElection() bool { return false }
