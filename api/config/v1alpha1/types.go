package v1alpha1

import (
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

	// pluginHost configures how the controller runs the external
	// (out-of-process) plugins.
	// +optional
	PluginHost PluginHostConfig `json:"pluginHost,omitempty"`

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

	// clientConnection configures the controller's client of the API
	// server, however the cluster is found (--kubeconfig, $KUBECONFIG or
	// the in-cluster service account).
	// +optional
	ClientConnection ClientConnectionConfig `json:"clientConnection,omitempty"`

	// controller configures the TrainJob controller.
	// +optional
	Controller ControllerConfig `json:"controller,omitempty"`

	// statusServer configures the status endpoint, where training code
	// reports its progress into status.trainerStatus with Kubeflow
	// Trainer's protocol, and what the host tells plugins about it (their
	// Handle), which a plugin tells the trainer pods.
	// +optional
	StatusServer StatusServerConfig `json:"statusServer,omitempty"`
}

// StatusServerConfig configures the status endpoint. Its defaults are set
// here only (SetDefaults); plugins get the defaulted values as host facts.
type StatusServerConfig struct {
	// enable serves the status endpoint, on every replica. It is served
	// with the webhook server's certificate, so only when the webhooks
	// are enabled. Defaults to true.
	// +optional
	Enable *bool `json:"enable,omitempty"`

	// port the endpoint listens on, HTTPS. Defaults to 10443, as
	// Kubeflow Trainer's.
	// +optional
	Port *int32 `json:"port,omitempty"`

	// serviceName is the Service in front of the endpoint, the one whose
	// name the serving certificate is for. Defaults to
	// webhook.certManagement.webhookServiceName, else
	// "trainforge-webhook-service".
	// +optional
	ServiceName string `json:"serviceName,omitempty"`

	// serviceNamespace is the namespace of that Service. Defaults to
	// webhook.certManagement.namespace, else the namespace the controller
	// runs in, else leaderElection.resourceNamespace, else
	// "trainforge-system".
	// +optional
	ServiceNamespace string `json:"serviceNamespace,omitempty"`

	// caConfigMapName is the ConfigMap, one per namespace that has
	// TrainJobs, through which trainer pods get the CA that signs the
	// endpoint's certificate. The controller writes it. Defaults to
	// "trainforge-status-ca".
	// +optional
	CAConfigMapName string `json:"caConfigMapName,omitempty"`

	// minUpdateInterval is the least time between two progress updates
	// of one TrainJob that the endpoint applies; a post that comes sooner
	// is refused with 429 and a Retry-After header. Defaults to 1s.
	// +optional
	MinUpdateInterval *metav1.Duration `json:"minUpdateInterval,omitempty"`

	// tokenExpirationSeconds is the lifetime of the service-account
	// token mounted in trainer pods (the kubelet renews it before it
	// expires). Defaults to 3600; at least 600, the API server's minimum.
	// +optional
	TokenExpirationSeconds *int64 `json:"tokenExpirationSeconds,omitempty"`

	// maxMetricsPerTrainJob bounds how many of a TrainJob's reported
	// metrics are exported to Prometheus (the numeric ones, in the order
	// reported). Defaults to 16.
	// +optional
	MaxMetricsPerTrainJob *int32 `json:"maxMetricsPerTrainJob,omitempty"`
}

// Enabled reports whether the status endpoint is served.
func (s *StatusServerConfig) Enabled() bool { return s.Enable == nil || *s.Enable }

// URL is the base URL at which pods reach the status endpoint.
func (s *StatusServerConfig) URL() string {
	port := DefaultStatusServerPort
	if s.Port != nil {
		port = *s.Port
	}
	return fmt.Sprintf("https://%s.%s.svc:%d", s.ServiceName, s.ServiceNamespace, port)
}

// Defaults of statusServer.
const (
	DefaultStatusServerPort             int32 = 10443
	DefaultStatusCAConfigMapName              = "trainforge-status-ca"
	DefaultStatusMinUpdateInterval            = time.Second
	DefaultStatusTokenExpirationSeconds int64 = 3600
	// MinStatusTokenExpirationSeconds is the API server's minimum
	// lifetime of a projected token.
	MinStatusTokenExpirationSeconds int64 = 600
	DefaultMaxMetricsPerTrainJob    int32 = 16
)

// Defaults of the client and of the controller. They are sized for a
// burst of thousands of TrainJobs: each TrainJob costs the controller about
// three writes (one apply per built object, one status update, one
// Event), so the client lets a few hundred TrainJobs a second through, and
// the workers are enough to keep the API server busy while each waits
// for its answers. API Priority and Fairness still protects the API server.
const (
	// DefaultQPS is the default clientConnection.qps.
	DefaultQPS float32 = 500
	// DefaultBurst is the default clientConnection.burst.
	DefaultBurst int32 = 1000
	// DefaultWorkers is the default controller.workers.
	DefaultWorkers int32 = 16
)

// ClientConnectionConfig configures the client of the API server.
type ClientConnectionConfig struct {
	// qps is the sustained number of requests per second the controller
	// sends to the API server (client-side rate limit). -1 disables the
	// client-side limit. Defaults to 500.
	// +optional
	QPS *float32 `json:"qps,omitempty"`

	// burst is the number of requests the controller may send at once
	// above qps. Defaults to 1000; ignored when qps is -1.
	// +optional
	Burst *int32 `json:"burst,omitempty"`
}

// ControllerConfig configures the TrainJob controller.
type ControllerConfig struct {
	// workers is how many TrainJobs are reconciled at once. A plugin call
	// that hangs holds one worker for at most its callTimeout while the
	// others go on. Defaults to 16.
	// +optional
	Workers *int32 `json:"workers,omitempty"`
}

// PluginConfig enables one plugin.
type PluginConfig struct {
	// name of the plugin, as registered (built-in) or as the plugin
	// describes itself.
	Name string `json:"name"`

	// args configure the plugin; each plugin documents its own. An
	// external plugin receives them in Configure.
	// +optional
	Args *apiextensionsv1.JSON `json:"args,omitempty"`

	// failurePolicy says what a failed call of this plugin does: Fail
	// (default) or Ignore.
	// +optional
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`

	// external, when set, runs the plugin out of process (even when a
	// built-in has the same name).
	// +optional
	External *ExternalPlugin `json:"external,omitempty"`

	// wasm, when set, runs the plugin compiled to WebAssembly in the
	// controller's own process, in a sandbox (even when a built-in has the
	// same name). Exclusive with external.
	// +optional
	Wasm *WasmPlugin `json:"wasm,omitempty"`
}

// FailurePolicy says what a failed call of a plugin does.
type FailurePolicy string

const (
	// FailurePolicyFail fails the reconcile: the TrainJob gets a condition
	// and an Event naming the plugin, and the reconcile is retried with
	// backoff. A Fail plugin that is not running makes the controller
	// unready.
	FailurePolicyFail FailurePolicy = "Fail"
	// FailurePolicyIgnore skips the plugin for that call: its changes are
	// discarded, with an Event and a metric.
	FailurePolicyIgnore FailurePolicy = "Ignore"

	// DefaultFailurePolicy is the failure policy of an entry that sets none.
	DefaultFailurePolicy = FailurePolicyFail
)

// Defaults of the external plugins and of the plugin host.
const (
	// DefaultStartTimeout is the default external.startTimeout: the time
	// to start the binary, complete the handshake, Describe and Configure.
	DefaultStartTimeout = 10 * time.Second
	// DefaultCallTimeout is the default external.callTimeout: the deadline
	// of each call.
	DefaultCallTimeout = 2 * time.Second
	// DefaultRestartBackoffInitial is the default
	// pluginHost.restartBackoff.initial: the wait before the first restart.
	DefaultRestartBackoffInitial = 1 * time.Second
	// DefaultRestartBackoffMax is the default pluginHost.restartBackoff.max:
	// the cap of the doubling wait between restarts.
	DefaultRestartBackoffMax = 1 * time.Minute
)

// ExternalPlugin runs a plugin out of process: either as a child process
// of the controller (command), or in a container of its own that serves on
// a Unix socket the controller connects to (socket). Exactly one of
// command and socket is set.
type ExternalPlugin struct {
	// command is the plugin binary, which the controller runs as a child
	// process with hashicorp/go-plugin; a bare name is looked up in the
	// controller's PATH.
	// +optional
	Command string `json:"command,omitempty"`

	// socket is the absolute path of the Unix socket of a plugin that runs
	// on its own (its own container in the controller's pod, sharing an
	// emptyDir), served by the SDK when TRAINFORGE_PLUGIN_SOCKET is set to
	// that path, for example /var/run/trainforge/plugins/mpi.sock. The
	// controller connects to it instead of starting a process.
	// +optional
	Socket string `json:"socket,omitempty"`

	// args are the command-line arguments of the binary (not the plugin
	// args, which are PluginConfig.Args and go to Configure). Only with
	// command.
	// +optional
	Args []string `json:"args,omitempty"`

	// sha256 is the hex SHA-256 of the binary, checked before every start.
	// When empty the binary is not checked. Only with command.
	// +optional
	SHA256 string `json:"sha256,omitempty"`

	// env is the plugin process's environment, besides go-plugin's
	// handshake variables, PATH (default DefaultPluginPath) and GOMAXPROCS
	// (pluginHost.goMaxProcs), which it may override. Nothing else of the
	// controller's environment reaches the plugin. Only with command: a
	// socket plugin's environment is its container's.
	// +optional
	Env []EnvVar `json:"env,omitempty"`

	// startTimeout is the time to start the binary (or connect to the
	// socket), complete the handshake, Describe and Configure. Defaults
	// to 10s.
	// +optional
	StartTimeout *metav1.Duration `json:"startTimeout,omitempty"`

	// callTimeout is the deadline of each call. Defaults to 2s.
	// +optional
	CallTimeout *metav1.Duration `json:"callTimeout,omitempty"`
}

// WasmPlugin runs a plugin compiled to WebAssembly (a WASI reactor module:
// GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared with the SDK) in
// the controller's process, with wazero. The module gets no file system,
// no environment, no network and no real clock; its memory and the time of
// each call are bounded; it logs through the controller's logger.
type WasmPlugin struct {
	// module is the absolute path of the .wasm file, such as a file of a
	// ConfigMap, a Secret or an image volume mounted in the controller's
	// pod.
	Module string `json:"module"`

	// sha256 is the hex SHA-256 of the module, checked before it is
	// compiled. Required: the module runs in the controller's own process.
	SHA256 string `json:"sha256"`

	// args are the module's command-line arguments (os.Args[1:] of a Go
	// plugin), as external.args are a binary's; not the plugin args,
	// which are PluginConfig.Args and go to Configure.
	// +optional
	Args []string `json:"args,omitempty"`

	// startTimeout bounds the start of one instance of the module: its
	// initialisation, its main, Describe and Configure (not the module's
	// compilation, which is done once). Defaults to 10s.
	// +optional
	StartTimeout *metav1.Duration `json:"startTimeout,omitempty"`

	// callTimeout is the deadline of each call; the module is interrupted
	// at it. Defaults to 2s.
	// +optional
	CallTimeout *metav1.Duration `json:"callTimeout,omitempty"`

	// memoryLimit bounds the memory of each instance of the module (a
	// quantity such as 128Mi, between 1Mi and 4Gi, in 64Ki pages). A module
	// whose memory would grow past it fails the call. Defaults to 128Mi.
	// +optional
	MemoryLimit *resource.Quantity `json:"memoryLimit,omitempty"`

	// maxInstances bounds the instances of the module, and so the calls
	// of the plugin under way at once (one per instance); the plugin's
	// memory is at most maxInstances × memoryLimit. Defaults to 4.
	// +optional
	MaxInstances *int32 `json:"maxInstances,omitempty"`
}

// Defaults and bounds of wasm plugins.
var (
	// DefaultWasmMemoryLimit is the default wasm.memoryLimit.
	DefaultWasmMemoryLimit = resource.MustParse("128Mi")
	// MinWasmMemoryLimit and MaxWasmMemoryLimit bound wasm.memoryLimit:
	// the least a Go module starts in, and a 32-bit module's whole memory.
	MinWasmMemoryLimit = resource.MustParse("1Mi")
	MaxWasmMemoryLimit = resource.MustParse("4Gi")
)

// DefaultWasmMemoryBudget is the default pluginHost.wasmMemoryBudget.
var DefaultWasmMemoryBudget = resource.MustParse("256Mi")

// DefaultWasmMaxInstances is the default wasm.maxInstances.
const DefaultWasmMaxInstances int32 = 4

// MaxWasmInstances bounds wasm.maxInstances.
const MaxWasmInstances int32 = 256

// EnvVar is one variable of a plugin process's environment.
type EnvVar struct {
	// name of the variable.
	Name string `json:"name"`
	// value of the variable.
	// +optional
	Value string `json:"value,omitempty"`
}

// DefaultPluginPath is the PATH of a plugin process whose entry sets none
// in external.env: enough for a script's `#!/usr/bin/env python3` to find
// the system's interpreter, and nothing of the controller's own PATH.
const DefaultPluginPath = "/usr/local/bin:/usr/bin:/bin"

// PluginHostConfig configures how the controller runs external plugins.
type PluginHostConfig struct {
	// socketDir is the directory of the plugins' Unix sockets. Defaults to
	// the system temp dir ($TMPDIR, else /tmp); set it to an emptyDir when
	// the root filesystem is read-only.
	// +optional
	SocketDir string `json:"socketDir,omitempty"`

	// restartBackoff is the wait between restarts of a crashed plugin or
	// retries of a plugin that failed to start.
	// +optional
	RestartBackoff RestartBackoff `json:"restartBackoff,omitempty"`

	// goMaxProcs is the GOMAXPROCS the plugin processes run with (a
	// plugin not written in Go ignores it); 0 leaves Go's default, one
	// thread per core. Defaults to 1: a plugin call is a little serial
	// work, and several plugin processes each waking a thread per core
	// compete with the controller for the same cores, which costs more CPU
	// than the calls themselves.
	// +optional
	GoMaxProcs *int32 `json:"goMaxProcs,omitempty"`

	// wasmCacheDir is a directory where the controller keeps the machine
	// code it compiles wasm modules to, keyed by the module's contents, so
	// that a restart of the controller (or a reload) with a module it
	// compiled before skips most of the compilation, 15-20 s and several
	// hundred MiB for a Go module. Empty: in memory only, compiled again
	// at every start. Must be writable; an emptyDir survives a restart of
	// the container, a PersistentVolume a new pod.
	// +optional
	WasmCacheDir string `json:"wasmCacheDir,omitempty"`

	// wasmMemoryBudget bounds the memory of every wasm plugin's instances
	// together, inside the controller's process: the sum over the wasm
	// entries of instances × memoryLimit never exceeds it. The entries
	// share it in configuration order, one instance each first, then one
	// more each in turn up to their maxInstances; an entry that would
	// need more runs fewer instances, and one for which not one instance
	// is left is refused at load, naming the figures. Defaults to 256Mi,
	// which the chart's default memory limit of the manager (1Gi) holds
	// beside the controller and the compilation of a module.
	// +optional
	WasmMemoryBudget *resource.Quantity `json:"wasmMemoryBudget,omitempty"`

	// limits bound what the controller accepts from an external plugin in
	// one call. An answer past a bound fails the call, under the plugin's
	// failure policy, with an error that names the bound.
	// +optional
	Limits PluginLimits `json:"limits,omitempty"`
}

// PluginLimits bound the answers of external plugins.
type PluginLimits struct {
	// maxMessageBytes bounds the size of one gRPC answer of a plugin.
	// Defaults to 4194304 (4 MiB, gRPC's own default).
	// +optional
	MaxMessageBytes *int32 `json:"maxMessageBytes,omitempty"`

	// maxObjects bounds the number of objects one Build answer may hold.
	// Defaults to 1000.
	// +optional
	MaxObjects *int32 `json:"maxObjects,omitempty"`

	// maxObjectBytes bounds the JSON size of each built object. Defaults
	// to 1572864 (1.5 MiB, the largest object etcd stores by default).
	// +optional
	MaxObjectBytes *int32 `json:"maxObjectBytes,omitempty"`

	// maxPatchOperations bounds the number of operations of one Enforce
	// answer's JSON Patch. Defaults to 10000.
	// +optional
	MaxPatchOperations *int32 `json:"maxPatchOperations,omitempty"`

	// maxDepth bounds how deeply each JSON document of an answer (a whole
	// Info, a patch, Info changes, a built object, a status), and the Info
	// it makes, may nest objects and lists. Defaults to 100: the deepest
	// Kubernetes objects nest about 30 levels, and Info changes, which
	// take two levels for each of Info's, about 60.
	// +optional
	MaxDepth *int32 `json:"maxDepth,omitempty"`
}

// Defaults of pluginHost.limits.
const (
	DefaultMaxMessageBytes    int32 = 4 << 20
	DefaultMaxObjects         int32 = 1000
	DefaultMaxObjectBytes     int32 = 1536 << 10
	DefaultMaxPatchOperations int32 = 10000
	DefaultMaxDepth           int32 = 100
)

// DefaultPluginGoMaxProcs is the default pluginHost.goMaxProcs.
const DefaultPluginGoMaxProcs int32 = 1

// RestartBackoff is an exponential backoff: initial, doubling up to max.
type RestartBackoff struct {
	// initial is the first wait. Defaults to 1s.
	// +optional
	Initial *metav1.Duration `json:"initial,omitempty"`

	// max is the cap of the wait. Defaults to 1m.
	// +optional
	Max *metav1.Duration `json:"max,omitempty"`
}

// MetricsConfig configures the metrics endpoint.
type MetricsConfig struct {
	// bindAddress is where /metrics is served; "0" disables it.
	// Defaults to ":8080".
	// +optional
	BindAddress string `json:"bindAddress,omitempty"`

	// perTrainJob adds trainforge_trainjob_state, one series per TrainJob
	// (labels namespace and trainjob). Off by default: every other metric
	// has label sets bounded by the number of runtimes, and a cluster with
	// many TrainJobs would otherwise grow Prometheus without bound.
	// +optional
	PerTrainJob bool `json:"perTrainJob,omitempty"`
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
	// default directory. With certManagement the controller writes them
	// there, so it must be writable (an emptyDir).
	// +optional
	CertDir string `json:"certDir,omitempty"`
	// certManagement lets the controller make and rotate its own webhook
	// serving certificate, as Kubeflow Trainer's does: a self-signed CA and
	// a serving certificate kept in a Secret of the controller's namespace,
	// written to certDir, and the CA written into the caBundle of its
	// validating webhook configuration. Leave it unset when something else
	// (cert-manager, a file) provides the certificate.
	// +optional
	CertManagement *CertManagement `json:"certManagement,omitempty"`
}

// CertManagement configures the controller's own webhook certificates.
type CertManagement struct {
	// enable turns certificate management on. Defaults to true when
	// certManagement is given.
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// namespace of the Secret and of the webhook Service. Defaults to the
	// namespace the controller runs in (from its service account), else
	// leaderElection.resourceNamespace, else "trainforge-system".
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// webhookServiceName is the Service in front of the webhook server; the
	// certificate is for <webhookServiceName>.<namespace>.svc. Defaults to
	// "trainforge-webhook-service".
	// +optional
	WebhookServiceName string `json:"webhookServiceName,omitempty"`
	// webhookSecretName is the Secret that keeps the CA and the serving
	// certificate. Defaults to "trainforge-webhook-server-cert".
	// +optional
	WebhookSecretName string `json:"webhookSecretName,omitempty"`
	// validatingWebhookConfigurationName is the webhook configuration whose
	// caBundle the controller keeps up to date. Defaults to
	// "trainforge-validating-webhook-configuration".
	// +optional
	ValidatingWebhookConfigurationName string `json:"validatingWebhookConfigurationName,omitempty"`
	// extraDNSNames are further names the certificate is valid for, for a
	// controller that the API server reaches at a URL (localhost when it
	// runs outside the cluster).
	// +optional
	ExtraDNSNames []string `json:"extraDNSNames,omitempty"`
}

// Enabled reports whether the controller manages its webhook certificates.
func (c *CertManagement) Enabled() bool {
	return c != nil && (c.Enable == nil || *c.Enable)
}
