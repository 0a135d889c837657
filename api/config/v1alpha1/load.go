package v1alpha1

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// DefaultPlugins is the plugin list used when the file names none.
var DefaultPlugins = []string{"PlainML", "Torch", "JobSet", "Coscheduling"}

// Load reads, strictly decodes, defaults and validates a configuration
// file. An empty path gives the defaults. knownPlugin says whether a name is
// a registered plugin.
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
		return nil, err
	}
	cfg := &Configuration{}
	strictErrs, err := sigsjson.UnmarshalStrict(jsonData, cfg, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, err
	}
	if len(strictErrs) > 0 {
		return nil, errors.Join(strictErrs...)
	}
	return cfg, nil
}

// SetDefaults fills in what the file left out.
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
}

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
	for i, p := range cfg.Plugins {
		path := field.NewPath("plugins").Index(i)
		switch {
		case p.Name == "":
			errs = append(errs, field.Required(path.Child("name"), "every plugin needs a name"))
		case knownPlugin != nil && !knownPlugin(p.Name):
			errs = append(errs, field.Invalid(path.Child("name"), p.Name, "no plugin of this name is registered"))
		}
		if first, dup := seen[p.Name]; dup && p.Name != "" {
			errs = append(errs, field.Duplicate(path.Child("name"), fmt.Sprintf("%s (first at plugins[%d])", p.Name, first)))
		} else {
			seen[p.Name] = i
		}
	}
	if port := cfg.Webhook.Port; port != nil && (*port < 1 || *port > 65535) {
		errs = append(errs, field.Invalid(field.NewPath("webhook", "port"), *port, "must be between 1 and 65535"))
	}
	return errs
}
