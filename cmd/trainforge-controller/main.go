// Command trainforge-controller runs the Trainforge operator: the TrainJob
// controller and its admission webhooks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
	"github.com/trainforge/trainforge/builtin"
	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/internal/operator"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "trainforge-controller:", err)
		os.Exit(1)
	}
}

// options are the command-line flags.
type options struct {
	configFile, kubeconfig, metricsAddr, probeAddr, pprofAddr string
	enableWebhooks                                            bool
	zap                                                       zap.Options
}

func parseFlags(args []string, output io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("trainforge-controller", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&o.configFile, "config", "", "Path to the Configuration file (config.trainforge.dev/v1alpha1). Without it the built-in plugins run with their defaults.")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Without it $KUBECONFIG or the in-cluster configuration is used.")
	fs.BoolVar(&o.enableWebhooks, "enable-webhooks", true, "Serve the admission webhooks. Set to false for a local run without certificates.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "", "Address of the metrics endpoint; overrides metrics.bindAddress of the config file. \"0\" disables it.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", "", "Address of the health probes; overrides health.healthProbeBindAddress of the config file.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address to serve Go's pprof profiles on (/debug/pprof/), for example 127.0.0.1:6060. Off when empty. Anyone who reaches it can read the controller's memory: bind it to localhost.")
	o.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: trainforge-controller takes only flags (--help lists them)", fs.Arg(0))
	}
	return o, nil
}

// loadConfig reads the configuration file and lets the flags override it.
func loadConfig(o *options, registry framework.Registry) (*configv1alpha1.Configuration, error) {
	cfg, err := configv1alpha1.Load(o.configFile, registry.Has)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return nil, fmt.Errorf("--config %s: %w; give the path of a readable Configuration file, or no --config to run the default plugins", o.configFile, pathErr.Err)
	}
	if err != nil {
		return nil, err
	}
	if o.metricsAddr != "" {
		cfg.Metrics.BindAddress = o.metricsAddr
	}
	if o.probeAddr != "" {
		cfg.Health.HealthProbeBindAddress = o.probeAddr
	}
	return cfg, nil
}

func run(args []string, output io.Writer) error {
	o, err := parseFlags(args, output)
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))

	registry := builtin.Registry()
	cfg, err := loadConfig(o, registry)
	if err != nil {
		return err
	}
	// External plugins live as long as this context: SIGTERM or an
	// interrupt stops the manager and kills them.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	plugins, err := operator.NewPlugins(ctx, cfg, registry, ctrl.Log)
	if err != nil {
		return err
	}
	restConfig, err := restConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	opts := operator.Options{Config: cfg, Framework: plugins.Framework(), PluginKinds: builtin.AddToScheme, EnableWebhooks: o.enableWebhooks, PprofBindAddress: o.pprofAddr}
	if o.configFile != "" {
		opts.Reload = &operator.ReloadOptions{
			Path:    o.configFile,
			Load:    func(string) (*configv1alpha1.Configuration, error) { return loadConfig(o, registry) },
			Plugins: plugins,
		}
	}
	mgr, err := operator.NewManager(ctx, restConfig, opts)
	if err != nil {
		return err
	}
	ctrl.Log.Info("starting", "plugins", pluginNames(cfg), "webhooks", o.enableWebhooks)
	return mgr.Start(ctx)
}

// restConfig finds the cluster: the --kubeconfig file, else $KUBECONFIG,
// else the in-cluster service account, else ~/.kube/config. Only the
// connection comes from there; the client's rate and the rest are the
// configuration file's (operator.ClientConfig), whichever way was taken.
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
