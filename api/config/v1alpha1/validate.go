package v1alpha1

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks a defaulted configuration. Every error names its field.
func Validate(cfg *Configuration, knownPlugin func(string) bool) field.ErrorList {
	var errs field.ErrorList
	if cfg.APIVersion != GroupVersion.String() {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), cfg.APIVersion, []string{GroupVersion.String()}))
	}
	if cfg.Kind != ConfigurationKind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), cfg.Kind, []string{ConfigurationKind}))
	}
	seen := map[string]int{}
	for i := range cfg.Plugins {
		p := &cfg.Plugins[i]
		path := field.NewPath("plugins").Index(i)
		switch {
		case p.Name == "":
			errs = append(errs, field.Required(path.Child("name"), "every plugin needs a name"))
		case p.External == nil && p.Wasm == nil && knownPlugin != nil && !knownPlugin(p.Name):
			errs = append(errs, field.Invalid(path.Child("name"), p.Name, unknownPluginMsg))
		}
		if first, dup := seen[p.Name]; dup && p.Name != "" {
			errs = append(errs, field.Duplicate(path.Child("name"), fmt.Sprintf("%s (first at plugins[%d])", p.Name, first)))
		} else {
			seen[p.Name] = i
		}
		switch p.FailurePolicy {
		case "", FailurePolicyFail, FailurePolicyIgnore: // "" is Fail
		default:
			errs = append(errs, field.NotSupported(path.Child("failurePolicy"), p.FailurePolicy,
				[]FailurePolicy{FailurePolicyFail, FailurePolicyIgnore}))
		}
		if p.External != nil {
			errs = append(errs, validateExternal(p.External, path.Child("external"))...)
		}
		if p.Wasm != nil {
			if p.External != nil {
				errs = append(errs, field.Forbidden(path.Child("wasm"),
					"external and wasm are exclusive: set external to run the plugin as a process, or wasm to run its WebAssembly module in the controller, not both"))
			}
			errs = append(errs, validateWasm(p.Wasm, path.Child("wasm"))...)
		}
	}
	errs = append(errs, validateBackoff(&cfg.PluginHost.RestartBackoff, field.NewPath("pluginHost", "restartBackoff"))...)
	if port := cfg.Webhook.Port; port != nil && (*port < 1 || *port > 65535) {
		errs = append(errs, field.Invalid(field.NewPath("webhook", "port"), *port, "must be between 1 and 65535"))
	}
	if c := cfg.Webhook.CertManagement; c != nil {
		errs = append(errs, validateCertManagement(c, field.NewPath("webhook", "certManagement"))...)
	}
	if d := cfg.PluginHost.WasmCacheDir; d != "" && (!filepath.IsAbs(d) || filepath.Clean(d) != d) {
		errs = append(errs, field.Invalid(field.NewPath("pluginHost", "wasmCacheDir"), d,
			"must be a clean absolute path of a writable directory, such as /var/cache/trainforge/wasm, or empty to keep compiled modules in memory only"))
	}
	if b := cfg.PluginHost.WasmMemoryBudget; b != nil && b.Cmp(MinWasmMemoryLimit) < 0 {
		errs = append(errs, field.Invalid(field.NewPath("pluginHost", "wasmMemoryBudget"), b.String(),
			fmt.Sprintf("must be at least %s, the least memoryLimit of one instance; the default is %s", MinWasmMemoryLimit.String(), DefaultWasmMemoryBudget.String())))
	}
	if n := cfg.PluginHost.GoMaxProcs; n != nil && *n < 0 {
		errs = append(errs, field.Invalid(field.NewPath("pluginHost", "goMaxProcs"), *n,
			"must be 0 (Go's default: one thread per core) or more"))
	}
	errs = append(errs, validateLimits(&cfg.PluginHost.Limits, field.NewPath("pluginHost", "limits"))...)
	errs = append(errs, validateClient(&cfg.ClientConnection, field.NewPath("clientConnection"))...)
	if w := cfg.Controller.Workers; w != nil && (*w < 1 || *w > MaxWorkers) {
		errs = append(errs, field.Invalid(field.NewPath("controller", "workers"), *w,
			fmt.Sprintf("must be between 1 and %d; %d suits most clusters", MaxWorkers, DefaultWorkers)))
	}
	errs = append(errs, validateStatusServer(cfg, field.NewPath("statusServer"))...)
	return errs
}

func validateStatusServer(cfg *Configuration, path *field.Path) field.ErrorList {
	s := &cfg.StatusServer
	var errs field.ErrorList
	if p := s.Port; p != nil {
		switch {
		case *p < 1 || *p > 65535:
			errs = append(errs, field.Invalid(path.Child("port"), *p, "must be between 1 and 65535"))
		case cfg.Webhook.Port != nil && int(*p) == *cfg.Webhook.Port && s.Enabled():
			// A disabled server binds no port: its default (10443) is
			// then a webhook port like any other.
			errs = append(errs, field.Invalid(path.Child("port"), *p, "must differ from webhook.port"))
		}
	}
	var fromCertManagement []string // already reported under webhook.certManagement
	if c := cfg.Webhook.CertManagement; c != nil {
		fromCertManagement = []string{c.WebhookServiceName, c.Namespace}
	}
	for _, n := range []struct{ field, value string }{
		{"serviceName", s.ServiceName}, {"serviceNamespace", s.ServiceNamespace},
	} {
		if n.value == "" || slices.Contains(fromCertManagement, n.value) {
			continue
		}
		if msgs := validation.IsDNS1123Label(n.value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child(n.field), n.value, strings.Join(msgs, "; ")))
		}
	}
	if s.CAConfigMapName != "" {
		if msgs := validation.IsDNS1123Subdomain(s.CAConfigMapName); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("caConfigMapName"), s.CAConfigMapName, strings.Join(msgs, "; ")))
		}
	}
	if d := s.MinUpdateInterval; d != nil && d.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("minUpdateInterval"), d.Duration.String(), "must be more than 0, for example 1s"))
	}
	if t := s.TokenExpirationSeconds; t != nil && *t < MinStatusTokenExpirationSeconds {
		errs = append(errs, field.Invalid(path.Child("tokenExpirationSeconds"), *t,
			fmt.Sprintf("must be at least %d (the API server's minimum)", MinStatusTokenExpirationSeconds)))
	}
	if m := s.MaxMetricsPerTrainJob; m != nil && (*m < 0 || *m > 256) {
		errs = append(errs, field.Invalid(path.Child("maxMetricsPerTrainJob"), *m, "must be between 0 and 256 (a TrainJob reports at most 256 metrics)"))
	}
	return errs
}

func validateCertManagement(c *CertManagement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, n := range []struct {
		field, value string
		check        func(string) []string
	}{
		{"namespace", c.Namespace, validation.IsDNS1123Label},
		{"webhookServiceName", c.WebhookServiceName, validation.IsDNS1123Label},
		{"webhookSecretName", c.WebhookSecretName, validation.IsDNS1123Subdomain},
		{"validatingWebhookConfigurationName", c.ValidatingWebhookConfigurationName, validation.IsDNS1123Subdomain},
	} {
		if n.value == "" {
			continue
		}
		if msgs := n.check(n.value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child(n.field), n.value, strings.Join(msgs, "; ")))
		}
	}
	for i, name := range c.ExtraDNSNames {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("extraDNSNames").Index(i), name, strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// MaxWorkers bounds controller.workers: beyond it workers only wait on
// each other and on the API server.
const MaxWorkers = 1024

func validateClient(c *ClientConnectionConfig, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q := c.QPS; q != nil && *q <= 0 && *q != -1 {
		errs = append(errs, field.Invalid(path.Child("qps"), *q,
			"must be greater than 0, or -1 to disable the client-side rate limit"))
	}
	if b := c.Burst; b != nil && *b < 1 && (c.QPS == nil || *c.QPS != -1) {
		errs = append(errs, field.Invalid(path.Child("burst"), *b,
			"must be at least 1 (the requests that may be sent at once above qps)"))
	}
	return errs
}

// unknownPluginMsg is the error of a name that is neither a built-in nor
// given an external entry.
const unknownPluginMsg = "no built-in plugin has this name; " +
	"an out-of-process plugin needs an `external` entry with its command, a WebAssembly plugin a `wasm` entry with its module"

// sha256Hex matches a hex SHA-256 in either case.
var sha256Hex = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

func validateExternal(e *ExternalPlugin, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case e.Command == "" && e.Socket == "":
		errs = append(errs, field.Required(path.Child("command"),
			"set command (the plugin binary, run as a child process: an absolute path, or a name looked up in PATH) "+
				"or socket (the absolute path of the Unix socket of a plugin that runs in its own container), one of them"))
	case e.Command != "" && e.Socket != "":
		errs = append(errs, field.Forbidden(path.Child("socket"),
			"command and socket are exclusive: set command to run the plugin as a child process, or socket to connect to a plugin that runs on its own, not both"))
	case e.Socket != "":
		if !filepath.IsAbs(e.Socket) || filepath.Clean(e.Socket) != e.Socket || strings.HasSuffix(e.Socket, "/") {
			errs = append(errs, field.Invalid(path.Child("socket"), e.Socket,
				"must be a clean absolute path, such as /var/run/trainforge/plugins/mpi.sock"))
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"args", len(e.Args) > 0}, {"sha256", e.SHA256 != ""}, {"env", len(e.Env) > 0}} {
			if f.set {
				errs = append(errs, field.Forbidden(path.Child(f.name),
					"applies only to command: a plugin on a socket runs in its own container, whose image, arguments and environment its pod spec sets"))
			}
		}
	}
	if e.SHA256 != "" && !sha256Hex.MatchString(e.SHA256) {
		errs = append(errs, field.Invalid(path.Child("sha256"), e.SHA256,
			"must be the hex SHA-256 of the binary, 64 hex digits (e.g. the first field of `sha256sum <binary>`)"))
	}
	errs = append(errs, validateEnv(e.Env, path.Child("env"))...)
	errs = append(errs, positive(e.StartTimeout, path.Child("startTimeout"))...)
	errs = append(errs, positive(e.CallTimeout, path.Child("callTimeout"))...)
	return errs
}

func validateWasm(w *WasmPlugin, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case w.Module == "":
		errs = append(errs, field.Required(path.Child("module"),
			"the absolute path of the plugin's .wasm file, such as /etc/trainforge/plugins/mpi.wasm (a mounted ConfigMap, Secret or image volume)"))
	case !filepath.IsAbs(w.Module) || filepath.Clean(w.Module) != w.Module:
		errs = append(errs, field.Invalid(path.Child("module"), w.Module,
			"must be a clean absolute path, such as /etc/trainforge/plugins/mpi.wasm"))
	}
	switch {
	case w.SHA256 == "":
		errs = append(errs, field.Required(path.Child("sha256"),
			"a wasm module runs in the controller's own process, so its checksum is required: the first field of `sha256sum <module>`"))
	case !sha256Hex.MatchString(w.SHA256):
		errs = append(errs, field.Invalid(path.Child("sha256"), w.SHA256,
			"must be the hex SHA-256 of the module, 64 hex digits (e.g. the first field of `sha256sum <module>`)"))
	}
	errs = append(errs, positive(w.StartTimeout, path.Child("startTimeout"))...)
	errs = append(errs, positive(w.CallTimeout, path.Child("callTimeout"))...)
	if m := w.MemoryLimit; m != nil && (m.Cmp(MinWasmMemoryLimit) < 0 || m.Cmp(MaxWasmMemoryLimit) > 0) {
		errs = append(errs, field.Invalid(path.Child("memoryLimit"), m.String(),
			fmt.Sprintf("must be between %s and %s; the default is %s", MinWasmMemoryLimit.String(), MaxWasmMemoryLimit.String(), DefaultWasmMemoryLimit.String())))
	}
	if n := w.MaxInstances; n != nil && (*n < 1 || *n > MaxWasmInstances) {
		errs = append(errs, field.Invalid(path.Child("maxInstances"), *n,
			fmt.Sprintf("must be between 1 and %d; the default is %d", MaxWasmInstances, DefaultWasmMaxInstances)))
	}
	return errs
}

// ReservedPluginEnv are the variables the plugin host sets for go-plugin's
// handshake (hashicorp/go-plugin v1.8's client.go), and the SDK's socket
// variable: external.env may not set them.
var ReservedPluginEnv = []string{
	"TRAINFORGE_PLUGIN", // the magic cookie (remote.Handshake)
	"TRAINFORGE_PLUGIN_SOCKET",
	"PLUGIN_PROTOCOL_VERSIONS",
	"PLUGIN_MIN_PORT",
	"PLUGIN_MAX_PORT",
	"PLUGIN_CLIENT_CERT",
	"PLUGIN_UNIX_SOCKET_DIR",
	"PLUGIN_UNIX_SOCKET_GROUP",
	"PLUGIN_MULTIPLEX_GRPC",
}

func validateEnv(env []EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]int{}
	for i, v := range env {
		p := path.Index(i).Child("name")
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(p, "the variable's name"))
			continue
		case slices.Contains(ReservedPluginEnv, v.Name):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf(
				"%s is set by the plugin host for go-plugin's handshake; any name but %s is accepted", v.Name, strings.Join(ReservedPluginEnv, ", "))))
		default:
			if msgs := validation.IsEnvVarName(v.Name); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p, v.Name, strings.Join(msgs, "; ")))
			}
		}
		if first, dup := seen[v.Name]; dup {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("%s (first at %s)", v.Name, path.Index(first))))
		} else {
			seen[v.Name] = i
		}
	}
	return errs
}

func validateLimits(l *PluginLimits, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		v    *int32
		def  int32
	}{
		{"maxMessageBytes", l.MaxMessageBytes, DefaultMaxMessageBytes},
		{"maxObjects", l.MaxObjects, DefaultMaxObjects},
		{"maxObjectBytes", l.MaxObjectBytes, DefaultMaxObjectBytes},
		{"maxPatchOperations", l.MaxPatchOperations, DefaultMaxPatchOperations},
		{"maxDepth", l.MaxDepth, DefaultMaxDepth},
	} {
		if f.v != nil && *f.v < 1 {
			errs = append(errs, field.Invalid(path.Child(f.name), *f.v, fmt.Sprintf("must be at least 1; the default is %d", f.def)))
		}
	}
	return errs
}

func validateBackoff(b *RestartBackoff, path *field.Path) field.ErrorList {
	errs := positive(b.Initial, path.Child("initial"))
	switch {
	case b.Max == nil:
	case b.Max.Duration <= 0:
		errs = append(errs, positive(b.Max, path.Child("max"))...)
	case b.Initial != nil && b.Initial.Duration > 0 && b.Max.Duration < b.Initial.Duration:
		errs = append(errs, field.Invalid(path.Child("max"), b.Max.Duration.String(),
			fmt.Sprintf("must not be less than initial (%s)", b.Initial.Duration)))
	}
	return errs
}

// positive checks that a set duration is greater than 0; unset means the
// default.
func positive(d *metav1.Duration, path *field.Path) field.ErrorList {
	if d == nil || d.Duration > 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(path, d.Duration.String(), "must be greater than 0")}
}
