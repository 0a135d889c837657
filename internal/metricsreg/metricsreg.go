// Package metricsreg registers the collectors that read a manager's cache
// at each scrape.
package metricsreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Replace registers c, replacing a collector of the same metrics already
// registered: the one of an earlier manager in the same process (tests),
// whose cache is stopped.
func Replace(reg prometheus.Registerer, c prometheus.Collector) error {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		reg.Unregister(already.ExistingCollector)
		err = reg.Register(c)
	}
	return err
}
