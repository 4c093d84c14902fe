package archive

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nearline/nearline/internal/logs"
)

// DefaultReplicaLagTimeout bounds the read of the replica lag at each
// scrape.
const DefaultReplicaLagTimeout = 2 * time.Second

// replicaLagCollector exports nearline_replica_lag_seconds, read from the
// database at each scrape (store.ReplicaLag). It has a sample only when the
// database is a replica; on a primary, or when the read fails (logged), the
// scrape has none.
type replicaLagCollector struct {
	st      Store
	timeout time.Duration
	logger  *slog.Logger
	desc    *prometheus.Desc
}

// NewReplicaLagCollector returns the collector of the replica lag of st's
// database. timeout bounds each read (default DefaultReplicaLagTimeout); a
// nil logger discards.
func NewReplicaLagCollector(st Store, timeout time.Duration, logger *slog.Logger) prometheus.Collector {
	if timeout <= 0 {
		timeout = DefaultReplicaLagTimeout
	}
	logger = logs.OrDiscard(logger)
	return &replicaLagCollector{st: st, timeout: timeout, logger: logger, desc: prometheus.NewDesc("nearline_replica_lag_seconds",
		"How far the PostgreSQL replica the server reads from trails its primary in replay (absent on a primary).", nil, nil)}
}

func (c *replicaLagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *replicaLagCollector) Collect(ch chan<- prometheus.Metric) {
	// Collect has no context of its own: the scrape's request is not passed.
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	lag, replica, err := c.st.ReplicaLag(ctx)
	if err != nil {
		c.logger.Warn("read replica lag for metrics", "err", err)
		return
	}
	if replica {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, lag.Seconds())
	}
}
