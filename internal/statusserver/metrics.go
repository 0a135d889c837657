package statusserver

import (
	"context"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The progress metrics. Their labels: namespace and trainjob name the
// TrainJob; metric, of the reported metrics, is the name the training code
// gave. Only the leader exports them (ProgressMetrics runs there), and a
// TrainJob's series go when it is deleted.
var (
	progressPercent = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "trainforge_trainjob_progress_percent",
		Help: "Progress of a TrainJob's training, 0 to 100, as its training code last reported it (status.trainerStatus.progressPercentage).",
	}, []string{"namespace", "trainjob"})
	remainingSeconds = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "trainforge_trainjob_estimated_remaining_seconds",
		Help: "Seconds of training a TrainJob's training code last estimated it has left (status.trainerStatus.estimatedRemainingSeconds).",
	}, []string{"namespace", "trainjob"})
	reportedMetric = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "trainforge_trainjob_reported_metric",
		Help: "A numeric metric a TrainJob's training code reported (status.trainerStatus.metrics), by name; at most statusServer.maxMetricsPerTrainJob per TrainJob.",
	}, []string{"namespace", "trainjob", "metric"})
	requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trainforge_status_server_requests_total",
		Help: "Posts to the status endpoint, by HTTP status code of the answer.",
	}, []string{"code"})
)

// Collectors are the package's metrics, for the controller's registry.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{progressPercent, remainingSeconds, reportedMetric, requests}
}

// ProgressMetrics keeps the progress metrics of every TrainJob equal to
// its status.trainerStatus. It runs on the leader, from the cache.
type ProgressMetrics struct {
	Client client.Client
	// MaxMetrics bounds the reported metrics exported per TrainJob.
	MaxMetrics int
}

// SetupWithManager adds it to the manager.
func (m *ProgressMetrics) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("progress-metrics").For(&trainer.TrainJob{}).Complete(m)
}

// Reconcile sets one TrainJob's series, or deletes them.
func (m *ProgressMetrics) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	labels := prometheus.Labels{"namespace": req.Namespace, "trainjob": req.Name}
	job := &trainer.TrainJob{}
	err := m.Client.Get(ctx, req.NamespacedName, job)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	reportedMetric.DeletePartialMatch(labels)
	var ts *trainer.TrainerStatus
	if err == nil {
		ts = job.Status.TrainerStatus
	}
	if ts == nil {
		progressPercent.Delete(labels)
		remainingSeconds.Delete(labels)
		return ctrl.Result{}, nil
	}
	setOrDelete(progressPercent, labels, ts.ProgressPercentage)
	setOrDelete(remainingSeconds, labels, ts.EstimatedRemainingSeconds)
	exported := 0
	for _, metric := range ts.Metrics {
		if exported >= m.MaxMetrics {
			break
		}
		v, err := strconv.ParseFloat(metric.Value, 64)
		if err != nil {
			continue // not a number: only in the TrainJob's status
		}
		reportedMetric.WithLabelValues(req.Namespace, req.Name, metric.Name).Set(v)
		exported++
	}
	return ctrl.Result{}, nil
}

func setOrDelete(g *prometheus.GaugeVec, labels prometheus.Labels, v *int32) {
	if v == nil {
		g.Delete(labels)
		return
	}
	g.With(labels).Set(float64(*v))
}
