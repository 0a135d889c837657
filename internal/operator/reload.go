package operator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
)

// Results of a configuration reload, the result label of
// trainforge_config_reloads_total.
const (
	ReloadApplied = "applied"
	ReloadInvalid = "invalid"
	ReloadRefused = "refused"
)

var configReloads = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "trainforge_config_reloads_total",
	Help: "Changes of the configuration file the controller read while it ran: applied, invalid (the file does not decode or validate), refused (a plugin could not be created or started). Invalid and refused changes leave the running plugins as they were.",
}, []string{"result"})

func init() { ctrlmetrics.Registry.MustRegister(configReloads) }

// Event reasons of a reload, on the controller's own Pod.
const (
	ReasonConfigReloaded      = "ConfigurationReloaded"
	ReasonConfigRefused       = "ConfigurationRefused"
	ReasonConfigNeedsRestart  = "ConfigurationNeedsRestart"
	reloadDebounce            = 300 * time.Millisecond
	reloadEventAction         = "Reload"
	controllerPodNameEnv      = "POD_NAME"
	controllerPodNamespaceEnv = "POD_NAMESPACE"
)

// ConfigWatcher applies changes of the configuration file while the
// controller runs. It watches the file's directory, so that a ConfigMap
// volume, which is updated by swapping a symlink, is seen too.
//
// The plugin list (order, args, failure policies, external binaries and
// their sha256, timeouts) and pluginHost change at once; a change that
// does not decode, validate or start is refused whole, and the plugins run
// on as they were. Every other setting (metrics, health, leader election,
// webhook, client connection) is read at start-up only: a change of one is
// logged and reported as needing a restart.
type ConfigWatcher struct {
	// Path is the configuration file.
	Path string
	// Load reads and checks the file as the controller did at start-up,
	// flag overrides included.
	Load func(path string) (*configv1alpha1.Configuration, error)
	// Applied is the configuration in use.
	Applied *configv1alpha1.Configuration
	// Plugins is the plugin set to change.
	Plugins *Plugins
	// Recorder records Events on the controller's Pod (from the POD_NAME
	// and POD_NAMESPACE variables); without them there is no Event.
	Recorder events.EventRecorder
	// Applied, when set, is told after a change of the plugins was
	// applied (the controller reconciles every TrainJob once).
	OnApplied func(ctx context.Context)

	last []byte // the file's content when last read
}

// NeedLeaderElection is false: every replica runs its own plugins and
// serves admission with them.
func (w *ConfigWatcher) NeedLeaderElection() bool { return false }

// Start watches the file until ctx ends.
func (w *ConfigWatcher) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("config-reload")
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching the configuration file %s: %w", w.Path, err)
	}
	defer watcher.Close()
	if err := watcher.Add(filepath.Dir(w.Path)); err != nil {
		return fmt.Errorf("watching the directory of the configuration file %s: %w", w.Path, err)
	}
	log.Info("watching the configuration file for changes", "file", w.Path)
	// The file may have changed between the controller's start-up, which
	// applied it, and the watch: compare it with what was applied once.
	w.reload(ctx)
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-watcher.Errors:
			log.Error(err, "watching the configuration file")
		case <-watcher.Events:
			// An editor or the kubelet may write in several steps.
			debounce = time.After(reloadDebounce)
		case <-debounce:
			w.reload(ctx)
		}
	}
}

// reload reads the file and applies what changed.
func (w *ConfigWatcher) reload(ctx context.Context) {
	log := ctrl.LoggerFrom(ctx).WithName("config-reload")
	data, err := os.ReadFile(w.Path)
	if err != nil || bytes.Equal(data, w.last) {
		return // gone for a moment (a symlink swap), or unchanged
	}
	w.last = data
	next, err := w.Load(w.Path)
	if err != nil {
		w.refuse(ctx, ReloadInvalid, err)
		return
	}
	if restart := restartFields(w.Applied, next); len(restart) > 0 {
		msg := fmt.Sprintf("configuration file %s: %s changed; these settings are read at start-up: restart the controller to apply them", w.Path, strings.Join(restart, ", "))
		log.Info(msg)
		w.event(corev1.EventTypeWarning, ReasonConfigNeedsRestart, msg)
	}
	if reflect.DeepEqual(w.Applied.Plugins, next.Plugins) && reflect.DeepEqual(w.Applied.PluginHost, next.PluginHost) {
		w.Applied = next
		return
	}
	if err := w.Plugins.Apply(next); err != nil {
		w.refuse(ctx, ReloadRefused, err)
		return
	}
	w.Applied = next
	configReloads.WithLabelValues(ReloadApplied).Inc()
	msg := fmt.Sprintf("configuration file %s reloaded: plugins %s", w.Path, strings.Join(pluginNames(next), ", "))
	log.Info(msg)
	w.event(corev1.EventTypeNormal, ReasonConfigReloaded, msg)
	if w.OnApplied != nil {
		w.OnApplied(ctx)
	}
}

func (w *ConfigWatcher) refuse(ctx context.Context, result string, err error) {
	configReloads.WithLabelValues(result).Inc()
	msg := fmt.Sprintf("configuration file %s not applied, the plugins run on as they were: %v", w.Path, err)
	ctrl.LoggerFrom(ctx).WithName("config-reload").Error(errors.New(msg), "configuration change refused", "result", result)
	w.event(corev1.EventTypeWarning, ReasonConfigRefused, msg)
}

// event records an Event on the controller's Pod, when it knows it.
func (w *ConfigWatcher) event(typ, reason, msg string) {
	name, ns := os.Getenv(controllerPodNameEnv), os.Getenv(controllerPodNamespaceEnv)
	if w.Recorder == nil || name == "" || ns == "" {
		return
	}
	var pod runtime.Object = &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}
	w.Recorder.Eventf(pod, nil, typ, reason, reloadEventAction, "%s", msg)
}

// restartFields names the settings other than the plugins that differ.
func restartFields(a, b *configv1alpha1.Configuration) []string {
	var out []string
	ra, rb := reflect.ValueOf(*a), reflect.ValueOf(*b)
	t := ra.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "", "plugins", "pluginHost", "apiVersion", "kind":
			continue
		}
		if !reflect.DeepEqual(ra.Field(i).Interface(), rb.Field(i).Interface()) {
			out = append(out, name)
		}
	}
	return out
}

func pluginNames(cfg *configv1alpha1.Configuration) []string {
	names := make([]string, 0, len(cfg.Plugins))
	for _, p := range cfg.Plugins {
		names = append(names, p.Name)
	}
	return names
}
