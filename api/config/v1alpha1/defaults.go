package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// DefaultPlugins is the plugin list used when the file names none.
//
// It is the configuration's documented default, as kube-scheduler's
// configuration API lists its default plugins; nothing here reads a
// plugin's args or treats one plugin apart.
var DefaultPlugins = []string{"PlainML", "Torch", "JobSet", "Coscheduling", "TrainJobStatus"}

// SetDefaults fills in what the file left out: the default plugin list,
// failurePolicy Fail, the timeouts of external plugins (and their sha256 in
// lower case), the restart backoff and the manager's settings. It keeps
// every value that is set, and running it twice changes nothing. It is the
// one place of the configuration's defaults: the controller, the plugin
// host and the tools read the values it sets. It reads no file: it is
// SetDefaultsIn for a controller whose namespace is not known.
func SetDefaults(cfg *Configuration) {
	SetDefaultsIn(cfg, "")
}

// SetDefaultsIn is SetDefaults for a controller that runs in namespace
// (Load reads it from the pod's service account; empty when not known):
// webhook.certManagement.namespace and statusServer.serviceNamespace
// default to it.
func SetDefaultsIn(cfg *Configuration, namespace string) {
	if cfg.APIVersion == "" {
		cfg.APIVersion = GroupVersion.String()
	}
	if cfg.Kind == "" {
		cfg.Kind = ConfigurationKind
	}
	if len(cfg.Plugins) == 0 {
		for _, name := range DefaultPlugins {
			cfg.Plugins = append(cfg.Plugins, PluginConfig{Name: name})
		}
	}
	for i := range cfg.Plugins {
		p := &cfg.Plugins[i]
		if p.FailurePolicy == "" {
			p.FailurePolicy = DefaultFailurePolicy
		}
		if e := p.External; e != nil {
			if e.StartTimeout == nil {
				e.StartTimeout = &metav1.Duration{Duration: DefaultStartTimeout}
			}
			if e.CallTimeout == nil {
				e.CallTimeout = &metav1.Duration{Duration: DefaultCallTimeout}
			}
			e.SHA256 = strings.ToLower(e.SHA256)
		}
		if w := p.Wasm; w != nil {
			if w.StartTimeout == nil {
				w.StartTimeout = &metav1.Duration{Duration: DefaultStartTimeout}
			}
			if w.CallTimeout == nil {
				w.CallTimeout = &metav1.Duration{Duration: DefaultCallTimeout}
			}
			if w.MemoryLimit == nil {
				w.MemoryLimit = ptr.To(DefaultWasmMemoryLimit.DeepCopy())
			}
			if w.MaxInstances == nil {
				w.MaxInstances = ptr.To(DefaultWasmMaxInstances)
			}
			w.SHA256 = strings.ToLower(w.SHA256)
		}
	}
	if cfg.PluginHost.WasmMemoryBudget == nil {
		cfg.PluginHost.WasmMemoryBudget = ptr.To(DefaultWasmMemoryBudget.DeepCopy())
	}
	if cfg.PluginHost.RestartBackoff.Initial == nil {
		cfg.PluginHost.RestartBackoff.Initial = &metav1.Duration{Duration: DefaultRestartBackoffInitial}
	}
	if cfg.PluginHost.RestartBackoff.Max == nil {
		cfg.PluginHost.RestartBackoff.Max = &metav1.Duration{Duration: DefaultRestartBackoffMax}
	}
	if cfg.Metrics.BindAddress == "" {
		cfg.Metrics.BindAddress = ":8080"
	}
	if cfg.Health.HealthProbeBindAddress == "" {
		cfg.Health.HealthProbeBindAddress = ":8081"
	}
	if cfg.LeaderElection.LeaderElect == nil {
		cfg.LeaderElection.LeaderElect = ptr.To(false)
	}
	if cfg.LeaderElection.ResourceName == "" {
		cfg.LeaderElection.ResourceName = "trainforge-controller.trainforge.dev"
	}
	if cfg.Webhook.Port == nil {
		cfg.Webhook.Port = ptr.To(9443)
	}
	if c := cfg.Webhook.CertManagement; c != nil {
		if c.Namespace == "" {
			c.Namespace = namespace
		}
		if c.Enable == nil {
			c.Enable = ptr.To(true)
		}
		if c.WebhookServiceName == "" {
			c.WebhookServiceName = DefaultWebhookServiceName
		}
		if c.WebhookSecretName == "" {
			c.WebhookSecretName = DefaultWebhookSecretName
		}
		if c.ValidatingWebhookConfigurationName == "" {
			c.ValidatingWebhookConfigurationName = DefaultValidatingWebhookConfigurationName
		}
	}
	if cfg.PluginHost.GoMaxProcs == nil {
		cfg.PluginHost.GoMaxProcs = ptr.To(DefaultPluginGoMaxProcs)
	}
	setDefaultLimits(&cfg.PluginHost.Limits)
	if cfg.ClientConnection.QPS == nil {
		cfg.ClientConnection.QPS = ptr.To(DefaultQPS)
	}
	if cfg.ClientConnection.Burst == nil {
		cfg.ClientConnection.Burst = ptr.To(DefaultBurst)
	}
	if cfg.Controller.Workers == nil {
		cfg.Controller.Workers = ptr.To(DefaultWorkers)
	}
	setStatusServerDefaults(cfg, namespace)
}

// setStatusServerDefaults defaults statusServer. Plugins read it through
// the host's facts (framework.Handle, made by framework/external.HostFor),
// never through args rewritten here: the configuration knows no plugin.
func setStatusServerDefaults(cfg *Configuration, namespace string) {
	s := &cfg.StatusServer
	if s.Enable == nil {
		s.Enable = ptr.To(true)
	}
	if s.Port == nil {
		s.Port = ptr.To(DefaultStatusServerPort)
	}
	if s.ServiceName == "" {
		s.ServiceName = DefaultWebhookServiceName
		if c := cfg.Webhook.CertManagement; c != nil && c.WebhookServiceName != "" {
			s.ServiceName = c.WebhookServiceName
		}
	}
	if s.ServiceNamespace == "" {
		s.ServiceNamespace = controllerNamespace(cfg, namespace)
	}
	if s.CAConfigMapName == "" {
		s.CAConfigMapName = DefaultStatusCAConfigMapName
	}
	if s.MinUpdateInterval == nil {
		s.MinUpdateInterval = &metav1.Duration{Duration: DefaultStatusMinUpdateInterval}
	}
	if s.TokenExpirationSeconds == nil {
		s.TokenExpirationSeconds = ptr.To(DefaultStatusTokenExpirationSeconds)
	}
	if s.MaxMetricsPerTrainJob == nil {
		s.MaxMetricsPerTrainJob = ptr.To(DefaultMaxMetricsPerTrainJob)
	}
}

// ControllerNamespace is the namespace of the controller's Services and
// Secrets: webhook.certManagement.namespace (which Load defaults to the
// namespace the controller runs in), else leaderElection.resourceNamespace,
// else "trainforge-system".
func ControllerNamespace(cfg *Configuration) string {
	return controllerNamespace(cfg, "")
}

// controllerNamespace is ControllerNamespace for a controller that runs in
// namespace, which comes after certManagement.namespace.
func controllerNamespace(cfg *Configuration, namespace string) string {
	if c := cfg.Webhook.CertManagement; c != nil && c.Namespace != "" {
		return c.Namespace
	}
	if namespace != "" {
		return namespace
	}
	if ns := cfg.LeaderElection.ResourceNamespace; ns != "" {
		return ns
	}
	return "trainforge-system"
}

// Defaulted returns a copy of cfg with its defaults set (SetDefaults), for
// code that reads a configuration which may not come from Load.
func Defaulted(cfg *Configuration) *Configuration {
	out := cfg.DeepCopy()
	SetDefaults(out)
	return out
}

func setDefaultLimits(l *PluginLimits) {
	for _, f := range []struct {
		v   **int32
		def int32
	}{
		{&l.MaxMessageBytes, DefaultMaxMessageBytes},
		{&l.MaxObjects, DefaultMaxObjects},
		{&l.MaxObjectBytes, DefaultMaxObjectBytes},
		{&l.MaxPatchOperations, DefaultMaxPatchOperations},
		{&l.MaxDepth, DefaultMaxDepth},
	} {
		if *f.v == nil {
			*f.v = ptr.To(f.def)
		}
	}
}

// Defaults of certManagement.
const (
	DefaultWebhookServiceName                 = "trainforge-webhook-service"
	DefaultWebhookSecretName                  = "trainforge-webhook-server-cert"
	DefaultValidatingWebhookConfigurationName = "trainforge-validating-webhook-configuration"
)
