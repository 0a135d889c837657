package v1alpha1

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// DefaultPlugins is the plugin list used when the file names none.
//
// It is the configuration's documented default, as kube-scheduler's
// configuration API lists its default plugins; nothing here reads a
// plugin's args or treats one plugin apart.
var DefaultPlugins = []string{"PlainML", "Torch", "JobSet", "Coscheduling", "TrainJobStatus"}

// Load reads, strictly decodes, defaults and validates a configuration
// file. An empty path gives the defaults. knownPlugin says whether a name is
// a registered (built-in) plugin; an entry with external needs no
// registered name, and a nil knownPlugin accepts every name.
func Load(path string, knownPlugin func(string) bool) (*Configuration, error) {
	cfg := &Configuration{}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading configuration: %w", err)
		}
		if cfg, err = Decode(data); err != nil {
			return nil, fmt.Errorf("configuration %s: %w", path, err)
		}
	}
	SetDefaults(cfg)
	if errs := Validate(cfg, knownPlugin); len(errs) > 0 {
		return nil, fmt.Errorf("configuration %s is invalid: %w", path, errs.ToAggregate())
	}
	return cfg, nil
}

// Decode decodes a configuration strictly: an unknown or duplicated field
// is an error that names it with its path, such as
// unknown field "plugins[0].failurPolicy".
func Decode(data []byte) (*Configuration, error) {
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, yamlError(err)
	}
	cfg := &Configuration{}
	strictErrs, err := sigsjson.UnmarshalStrict(jsonData, cfg, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		// A bad duration fails in metav1.Duration, whose error does not
		// say where it is: find it and name it.
		if durErrs := checkDurations(jsonData); len(durErrs) > 0 {
			return nil, durErrs.ToAggregate()
		}
		return nil, typeError(err)
	}
	if len(strictErrs) > 0 {
		for i, e := range strictErrs {
			strictErrs[i] = unknownFieldError(e)
		}
		return nil, errors.Join(strictErrs...)
	}
	return cfg, nil
}

// duplicateKey is the YAML decoder's message of a key given twice.
var duplicateKey = regexp.MustCompile(`line (\d+): key (".*") already set in map`)

// yamlError says "line 5: key "port" is given twice; give each key once"
// for the decoder's multi-line "yaml: unmarshal errors:\n  line 5: key
// "port" already set in map"; other errors are returned as they are.
func yamlError(err error) error {
	m := duplicateKey.FindAllStringSubmatch(err.Error(), -1)
	if m == nil {
		return err
	}
	var msgs []string
	for _, d := range m {
		msgs = append(msgs, fmt.Sprintf("line %s: key %s is given twice; give each key once", d[1], d[2]))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// unknownField is the strict decoder's message of an unknown field.
var unknownField = regexp.MustCompile(`^unknown field "(.*)"$`)

// unknownFieldError adds the fields that are accepted where an unknown
// field was found: unknown field "plugins[0].failurPolicy"; a plugins
// entry has name, args, failurePolicy, external.
func unknownFieldError(err error) error {
	m := unknownField.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	parent, where := "", "the top level"
	if i := strings.LastIndex(m[1], "."); i >= 0 {
		parent = m[1][:i]
		where = describePath(parent)
	}
	t := typeAt(reflect.TypeOf(Configuration{}), parent)
	if t == nil || t.Kind() != reflect.Struct {
		return err
	}
	return fmt.Errorf("%w; %s has %s", err, where, strings.Join(jsonFields(t), ", "))
}

// describePath names the object at a path: "plugins[0]" is "a plugins
// entry", "plugins[0].external" is "plugins[0].external".
func describePath(path string) string {
	if i := strings.Index(path, "["); i > 0 && strings.HasSuffix(path, "]") && !strings.Contains(path[:i], ".") {
		return "a " + path[:i] + " entry"
	}
	return path
}

// fieldPathType is the declared type of the field at a dotted path of the
// decoder's type errors, such as "plugins" or "plugins.external", or nil.
func fieldPathType(path string) reflect.Type {
	t := reflect.TypeOf(Configuration{})
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		t = fieldType(t, seg)
		if t == nil {
			return nil
		}
		if i < len(segs)-1 {
			for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
		}
	}
	return t
}

// typeAt is the Go type of the value at a path of JSON names, such as
// "plugins[0].external", or nil.
func typeAt(t reflect.Type, path string) reflect.Type {
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' }) {
		name, _, indexed := strings.Cut(seg, "[")
		t = fieldType(t, name)
		if t == nil {
			return nil
		}
		for ; indexed && (t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer); t = t.Elem() {
		}
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fieldType is the type of the field of struct t whose JSON name is name,
// looking through inlined structs, or nil.
func fieldType(t reflect.Type, name string) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "" && f.Anonymous {
			if ft := fieldType(f.Type, name); ft != nil {
				return ft
			}
			continue
		}
		if tag == name {
			return f.Type
		}
	}
	return nil
}

// jsonFields are the JSON names of a struct's fields, inlined ones
// included, in declaration order.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case tag == "" && f.Anonymous:
			out = append(out, jsonFields(f.Type)...)
		case tag != "":
			out = append(out, tag)
		}
	}
	return out
}

// jsonTypeError is the message of a value of the wrong JSON type, whose
// error type the decoder does not export: "json: cannot unmarshal object
// into Go struct field Configuration.plugins of type []v1alpha1.PluginConfig".
var jsonTypeError = regexp.MustCompile(`^json: cannot unmarshal (\w+)(?: \S+)? into Go struct field [^.]+\.(\S+) of type (\S+)$`)

// typeError says in the file's terms what a value of the wrong type should
// be, such as "plugins: must be a list, not an object"; other errors are
// returned as they are.
func typeError(err error) error {
	m := jsonTypeError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	got := map[string]string{"object": "an object", "array": "a list", "string": "a string", "number": "a number", "bool": "true or false"}[m[1]]
	if got == "" {
		got = m[1]
	}
	want := "an object"
	switch t := strings.TrimPrefix(m[3], "*"); {
	case strings.HasPrefix(t, "[]"):
		want = "a list"
	case t == "string" || t == "v1alpha1.FailurePolicy":
		want = "a string"
	case t == "bool":
		want = "true or false"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "float") || strings.HasPrefix(t, "uint"):
		want = "a number"
	}
	if t := fieldPathType(m[2]); t != nil && t.Kind() == reflect.Slice && want != "a list" {
		// The decoder names a list's entry by the list.
		return fmt.Errorf("each entry of %s must be %s, not %s", m[2], want, got)
	}
	return fmt.Errorf("%s: must be %s, not %s", m[2], want, got)
}

// SetDefaults fills in what the file left out: the default plugin list,
// failurePolicy Fail, the timeouts of external plugins (and their sha256 in
// lower case), the restart backoff and the manager's settings. It keeps
// every value that is set, and running it twice changes nothing. It is the
// one place of the configuration's defaults: the controller, the plugin
// host and the tools read the values it sets.
func SetDefaults(cfg *Configuration) {
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
	setStatusServerDefaults(cfg)
}

// setStatusServerDefaults defaults statusServer. Plugins read it through
// the host's facts (framework.Handle, made by framework/external.HostFor),
// never through args rewritten here: the configuration knows no plugin.
func setStatusServerDefaults(cfg *Configuration) {
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
		s.ServiceNamespace = ControllerNamespace(cfg)
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

// ServiceAccountNamespaceFile is where a pod's service account names its
// namespace.
var ServiceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ControllerNamespace is the namespace of the controller's Services and
// Secrets: webhook.certManagement.namespace, else the namespace the
// controller runs in (from its service account), else
// leaderElection.resourceNamespace, else "trainforge-system".
func ControllerNamespace(cfg *Configuration) string {
	if c := cfg.Webhook.CertManagement; c != nil && c.Namespace != "" {
		return c.Namespace
	}
	if data, err := os.ReadFile(ServiceAccountNamespaceFile); err == nil && strings.TrimSpace(string(data)) != "" {
		return strings.TrimSpace(string(data))
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
		case cfg.Webhook.Port != nil && int(*p) == *cfg.Webhook.Port:
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

// checkDurations names the duration fields of a configuration, as JSON,
// whose values are not durations, and the quantity fields whose values are
// not quantities.
func checkDurations(jsonData []byte) field.ErrorList {
	var doc struct {
		Plugins []struct {
			External *struct {
				StartTimeout json.RawMessage `json:"startTimeout"`
				CallTimeout  json.RawMessage `json:"callTimeout"`
			} `json:"external"`
			Wasm *struct {
				StartTimeout json.RawMessage `json:"startTimeout"`
				CallTimeout  json.RawMessage `json:"callTimeout"`
				MemoryLimit  json.RawMessage `json:"memoryLimit"`
			} `json:"wasm"`
		} `json:"plugins"`
		PluginHost struct {
			RestartBackoff struct {
				Initial json.RawMessage `json:"initial"`
				Max     json.RawMessage `json:"max"`
			} `json:"restartBackoff"`
			WasmMemoryBudget json.RawMessage `json:"wasmMemoryBudget"`
		} `json:"pluginHost"`
	}
	if json.Unmarshal(jsonData, &doc) != nil {
		return nil
	}
	var errs field.ErrorList
	check := func(raw json.RawMessage, path *field.Path) {
		if len(raw) == 0 || string(raw) == "null" {
			return
		}
		var value any = string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if _, err := time.ParseDuration(s); err == nil {
				return
			}
			value = s
		}
		errs = append(errs, field.Invalid(path, value, "must be a duration string such as 500ms, 10s or 1m"))
	}
	checkQuantity := func(raw json.RawMessage, path *field.Path) {
		if len(raw) == 0 || string(raw) == "null" {
			return
		}
		var q resource.Quantity
		if json.Unmarshal(raw, &q) == nil {
			return
		}
		var value any = string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			value = s
		}
		errs = append(errs, field.Invalid(path, value, "must be a quantity of bytes such as 64Mi, 128Mi or 1Gi"))
	}
	for i, p := range doc.Plugins {
		if p.External != nil {
			path := field.NewPath("plugins").Index(i).Child("external")
			check(p.External.StartTimeout, path.Child("startTimeout"))
			check(p.External.CallTimeout, path.Child("callTimeout"))
		}
		if p.Wasm != nil {
			path := field.NewPath("plugins").Index(i).Child("wasm")
			check(p.Wasm.StartTimeout, path.Child("startTimeout"))
			check(p.Wasm.CallTimeout, path.Child("callTimeout"))
			checkQuantity(p.Wasm.MemoryLimit, path.Child("memoryLimit"))
		}
	}
	path := field.NewPath("pluginHost", "restartBackoff")
	check(doc.PluginHost.RestartBackoff.Initial, path.Child("initial"))
	check(doc.PluginHost.RestartBackoff.Max, path.Child("max"))
	checkQuantity(doc.PluginHost.WasmMemoryBudget, field.NewPath("pluginHost", "wasmMemoryBudget"))
	return errs
}
