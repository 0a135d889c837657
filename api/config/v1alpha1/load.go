package v1alpha1

import (
	"fmt"
	"os"
	"strings"
)

// ServiceAccountNamespaceFile is where a pod's service account names its
// namespace: Load reads the controller's namespace there.
const ServiceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Load reads a configuration file (an empty path gives the defaults), and
// the controller's namespace from ServiceAccountNamespaceFile when it runs
// in a pod, then decodes (Decode), defaults (SetDefaultsIn) and validates
// (Validate) it. knownPlugin says whether a name is a registered
// (built-in) plugin; an entry with external or wasm needs no registered
// name, and a nil knownPlugin accepts every name.
func Load(path string, knownPlugin func(string) bool) (*Configuration, error) {
	return LoadIn(path, PodNamespace(ServiceAccountNamespaceFile), knownPlugin)
}

// LoadIn is Load for a controller that runs in namespace (empty when it is
// not known): it reads no file but the configuration at path.
func LoadIn(path, namespace string, knownPlugin func(string) bool) (*Configuration, error) {
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
	SetDefaultsIn(cfg, namespace)
	if errs := Validate(cfg, knownPlugin); len(errs) > 0 {
		return nil, fmt.Errorf("configuration %s is invalid: %w", path, errs.ToAggregate())
	}
	return cfg, nil
}

// PodNamespace is the namespace that file (a pod's
// ServiceAccountNamespaceFile) names, or "" when there is no such file, as
// outside a pod.
func PodNamespace(file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
