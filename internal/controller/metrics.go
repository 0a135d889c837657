package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Apply results counted by objectApplies.
const (
	applyResultApplied   = "applied"
	applyResultUnchanged = "unchanged"
	// A running object whose desired state changed is left alone until it
	// is suspended.
	applyResultKeptRunning = "kept-running"
	// An object that plugins create once (framework.CreateOnce) exists
	// and is never updated.
	applyResultExists = "exists"
	// An object that plugins create once did not exist and was created.
	applyResultCreated = "created"
)

var objectApplies = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "trainforge_object_applies_total",
	Help: "Objects the TrainJob controller applied (result=applied) or left alone because their desired state had not changed (result=unchanged) or because they run and their pod templates are immutable (result=kept-running), and objects created once (result=created) or left as they are because they exist (result=exists), per building plugin and kind.",
}, []string{"plugin", "kind", "result"})

func init() {
	metrics.Registry.MustRegister(objectApplies, resizes)
	metrics.Registry.MustRegister(lifecycleMetrics...)
}

// Collectors returns every collector of the TrainJob controller, those of
// metrics.perTrainJob included, for a test that checks what dashboards and
// alerts name: the controller registers them itself.
func Collectors() []prometheus.Collector {
	return append([]prometheus.Collector{objectApplies, resizes, &trainJobCollector{perTrainJob: true}}, lifecycleMetrics...)
}
