// Package v1alpha1 is the configuration file of the Trainforge controller:
// kind Configuration in config.trainforge.dev/v1alpha1. It lists the
// plugins, in the order they run, and the manager's settings.
//
// +kubebuilder:object:generate=true
// +groupName=config.trainforge.dev
package v1alpha1
