package goodput

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// The goodput metrics, one series per TrainJob that has an account (its
// code reported progress), brought up to the time of the scrape: between
// two updates of the status the time goes to its state. Labels: namespace
// and trainjob name the TrainJob; cause is the cause of a loss.
var (
	ratioDesc = prometheus.NewDesc("trainforge_trainjob_goodput_ratio",
		"Share of the time since a TrainJob's creation spent on training whose progress was kept (status.goodput), 0 to 1.",
		[]string{"namespace", "trainjob"}, nil)
	elapsedDesc = prometheus.NewDesc("trainforge_trainjob_goodput_elapsed_seconds",
		"Seconds since a TrainJob's creation (until it finished) that its goodput account covers.",
		[]string{"namespace", "trainjob"}, nil)
	productiveDesc = prometheus.NewDesc("trainforge_trainjob_goodput_productive_seconds",
		"Seconds a TrainJob spent training whose progress was kept.",
		[]string{"namespace", "trainjob"}, nil)
	lostDesc = prometheus.NewDesc("trainforge_trainjob_goodput_lost_seconds",
		"Seconds a TrainJob lost, by cause: waiting (to be admitted or scheduled, or suspended), start_up (until the first progress report), restart, resize, redone (work after the last checkpoint).",
		[]string{"namespace", "trainjob", "cause"}, nil)
)

// Collectors are the goodput metrics, for a list of what the controller
// serves (their values need the cache SetupWithManager gives them).
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{&collector{}}
}

type collector struct {
	reader client.Reader
	clock  clock.PassiveClock
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- ratioDesc
	ch <- elapsedDesc
	ch <- productiveDesc
	ch <- lostDesc
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	// A cache that has not synced yet blocks a List: a scrape waits no
	// longer than Prometheus' own default timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jobs := &trainer.TrainJobList{}
	if err := c.reader.List(ctx, jobs, client.UnsafeDisableDeepCopy); err != nil {
		ch <- prometheus.NewInvalidMetric(ratioDesc, err)
		return
	}
	now := c.clock.Now()
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if job.Status.Goodput == nil {
			continue
		}
		g := Live(job.Status.Goodput, job.CreationTimestamp.Time, now)
		gauge := func(d *prometheus.Desc, v int64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), append([]string{job.Namespace, job.Name}, labels...)...)
		}
		ratio := 0.0
		if g.ElapsedSeconds > 0 {
			ratio = float64(g.ProductiveSeconds) / float64(g.ElapsedSeconds)
		}
		ch <- prometheus.MustNewConstMetric(ratioDesc, prometheus.GaugeValue, ratio, job.Namespace, job.Name)
		gauge(elapsedDesc, g.ElapsedSeconds)
		gauge(productiveDesc, g.ProductiveSeconds)
		gauge(lostDesc, g.Lost.WaitingSeconds, "waiting")
		gauge(lostDesc, g.Lost.StartUpSeconds, "start_up")
		gauge(lostDesc, g.Lost.RestartSeconds, "restart")
		gauge(lostDesc, g.Lost.ResizeSeconds, "resize")
		gauge(lostDesc, g.Lost.RedoneSeconds, "redone")
	}
}
