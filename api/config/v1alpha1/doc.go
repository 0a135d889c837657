// Package v1alpha1 is the configuration file of the Trainforge controller:
// kind Configuration in config.trainforge.dev/v1alpha1. It lists the
// plugins, in the order they run, with their failure policy and, for
// plugins run out of process, their binary and timeouts; the plugin host's
// settings; and the manager's settings. docs/configuration.md is the
// reference.
//
// +kubebuilder:object:generate=true
// +groupName=config.trainforge.dev
package v1alpha1
