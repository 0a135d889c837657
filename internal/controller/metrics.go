package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Apply results counted by objectApplies.
const (
	applyResultApplied   = "applied"
	applyResultUnchanged = "unchanged"
)

var objectApplies = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "trainforge_object_applies_total",
	Help: "Objects the TrainJob controller applied (result=applied) or left alone because their desired state had not changed (result=unchanged), per building plugin and kind.",
}, []string{"plugin", "kind", "result"})

func init() {
	metrics.Registry.MustRegister(objectApplies)
}
