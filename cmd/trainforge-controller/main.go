// Command trainforge-controller runs the Trainforge operator: the TrainJob
// controller and its admission webhooks.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/internal/operator"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "trainforge-controller:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		configFile, kubeconfig, metricsAddr, probeAddr string
		enableWebhooks                                 bool
	)
	flag.StringVar(&configFile, "config", "", "Path to the Configuration file (config.trainforge.dev/v1alpha1). Without it the built-in plugins run with their defaults.")
	flag.StringVar(&kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Without it the in-cluster configuration or $KUBECONFIG is used.")
	flag.BoolVar(&enableWebhooks, "enable-webhooks", true, "Serve the admission webhooks. Set to false for a local run without certificates.")
	flag.StringVar(&metricsAddr, "metrics-bind-address", "", "Address of the metrics endpoint; overrides metrics.bindAddress of the config file. \"0\" disables it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", "", "Address of the health probes; overrides health.healthProbeBindAddress of the config file.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	registry := builtin.Registry()
	cfg, err := configv1alpha1.Load(configFile, registry.Has)
	if err != nil {
		return err
	}
	if metricsAddr != "" {
		cfg.Metrics.BindAddress = metricsAddr
	}
	if probeAddr != "" {
		cfg.Health.HealthProbeBindAddress = probeAddr
	}

	restConfig, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	mgr, err := operator.NewManager(ctx, restConfig, operator.Options{Config: cfg, Registry: registry, EnableWebhooks: enableWebhooks})
	if err != nil {
		return err
	}
	ctrl.Log.Info("starting", "plugins", pluginNames(cfg), "webhooks", enableWebhooks)
	return mgr.Start(ctx)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading --kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

func pluginNames(cfg *configv1alpha1.Configuration) []string {
	names := make([]string, 0, len(cfg.Plugins))
	for _, p := range cfg.Plugins {
		names = append(names, p.Name)
	}
	return names
}
