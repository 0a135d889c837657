package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of the configuration file.
var GroupVersion = schema.GroupVersion{Group: "config.trainforge.dev", Version: "v1alpha1"}

// ConfigurationKind is the kind of the configuration file.
const ConfigurationKind = "Configuration"

// +kubebuilder:object:root=true

// Configuration is the controller's configuration file.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// plugins lists the enabled plugins in the order they run in each
	// phase. It is authoritative: a plugin not listed does not run. When
	// omitted, the built-ins run in the order PlainML, Torch, JobSet,
	// Coscheduling.
	// +optional
	Plugins []PluginConfig `json:"plugins,omitempty"`

	// metrics configures the Prometheus metrics endpoint.
	// +optional
	Metrics MetricsConfig `json:"metrics,omitempty"`

	// health configures the liveness and readiness probes.
	// +optional
	Health HealthConfig `json:"health,omitempty"`

	// leaderElection configures leader election between replicas.
	// +optional
	LeaderElection LeaderElectionConfig `json:"leaderElection,omitempty"`

	// webhook configures the admission webhook server.
	// +optional
	Webhook WebhookConfig `json:"webhook,omitempty"`
}

// PluginConfig enables one plugin.
type PluginConfig struct {
	// name of the plugin, as registered (built-in) or as the plugin
	// describes itself.
	Name string `json:"name"`

	// args configure the plugin; each plugin documents its own.
	// +optional
	Args *apiextensionsv1.JSON `json:"args,omitempty"`
}

// MetricsConfig configures the metrics endpoint.
type MetricsConfig struct {
	// bindAddress is where /metrics is served; "0" disables it.
	// Defaults to ":8080".
	// +optional
	BindAddress string `json:"bindAddress,omitempty"`
}

// HealthConfig configures the probes.
type HealthConfig struct {
	// healthProbeBindAddress is where /healthz and /readyz are served.
	// Defaults to ":8081".
	// +optional
	HealthProbeBindAddress string `json:"healthProbeBindAddress,omitempty"`
}

// LeaderElectionConfig configures leader election.
type LeaderElectionConfig struct {
	// leaderElect enables leader election. Defaults to false.
	// +optional
	LeaderElect *bool `json:"leaderElect,omitempty"`
	// resourceNamespace is the namespace of the lease.
	// +optional
	ResourceNamespace string `json:"resourceNamespace,omitempty"`
	// resourceName is the name of the lease. Defaults to
	// "trainforge-controller.trainforge.dev".
	// +optional
	ResourceName string `json:"resourceName,omitempty"`
}

// WebhookConfig configures the webhook server.
type WebhookConfig struct {
	// port of the webhook server. Defaults to 9443.
	// +optional
	Port *int `json:"port,omitempty"`
	// certDir holds tls.crt and tls.key. Defaults to controller-runtime's
	// default directory.
	// +optional
	CertDir string `json:"certDir,omitempty"`
}
