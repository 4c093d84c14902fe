package indexer

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nearline/nearline/bundle"
)

// Metrics are the indexer's Prometheus metrics, registered on a registry
// main owns. A nil *Metrics records nothing.
type Metrics struct {
	indexedHeight  prometheus.Gauge
	headHeight     prometheus.Gauge
	blocks         prometheus.Counter
	rows           prometheus.Counter
	blockRate      prometheus.Gauge
	rowRate        prometheus.Gauge
	upstreamErrors *prometheus.CounterVec
	unknown        *prometheus.CounterVec
	malformed      prometheus.Counter
	commitSeconds  prometheus.Histogram
	dbRetries      prometheus.Counter
}

// NewMetrics returns the indexer's metrics, registered on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		indexedHeight: gauge("nearline_indexed_height", "Height of the last committed block."),
		headHeight:    gauge("nearline_head_height", "Height of the upstream's latest final block."),
		blocks:        counter("nearline_indexed_blocks_total", "Blocks committed (rate() gives blocks per second)."),
		rows:          counter("nearline_indexed_rows_total", "Rows written (rate() gives rows per second)."),
		blockRate:     gauge("nearline_blocks_per_second", "Blocks committed per second over the last progress interval."),
		rowRate:       gauge("nearline_rows_per_second", "Rows written per second over the last progress interval."),
		upstreamErrors: counterByKind("nearline_upstream_errors_total",
			"Failed upstream attempts by kind (timeout, http_5xx, http_429, malformed, ...)."),
		unknown: counterByKind("nearline_unknown_variants_total",
			"Things stored as the upstream served them that Nearline does not model, by kind (state_change:<type>, receipt:<kind>, action:<kind>, access_key_permission:<variant>)."),
		malformed: counter("nearline_malformed_event_logs_total",
			"EVENT_JSON logs of NEP-141, NEP-171 or NEP-245 skipped because they do not follow their standard (each is logged)."),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "nearline_commit_seconds",
			Help: "Latency of one batch commit.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}),
		dbRetries: counter("nearline_database_retries_total",
			"Database calls of the indexer retried after a transient error (connection lost, server restarting)."),
	}
	for _, c := range []prometheus.Collector{m.indexedHeight, m.headHeight, m.blocks, m.rows, m.blockRate, m.rowRate,
		m.upstreamErrors, m.unknown, m.malformed, m.commitSeconds, m.dbRetries} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register indexer metrics: %w", err)
		}
	}
	return m, nil
}

// gauge is a metric of one value that goes up and down.
func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// counter is a metric of one value that only goes up.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

// counterByKind is a counter per value of the label "kind".
func counterByKind(name, help string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"kind"})
}

// UpstreamError counts a failed upstream attempt; pass it as
// upstream.Config.OnError.
func (m *Metrics) UpstreamError(kind string) {
	if m != nil {
		m.upstreamErrors.WithLabelValues(kind).Inc()
	}
}

// databaseRetry counts a database call retried after a transient error.
func (m *Metrics) databaseRetry() {
	if m != nil {
		m.dbRetries.Inc()
	}
}

func (m *Metrics) setHead(height uint64) {
	if m != nil {
		m.headHeight.Set(float64(height))
	}
}

func (m *Metrics) setRates(blocks, rows float64) {
	if m != nil {
		m.blockRate.Set(blocks)
		m.rowRate.Set(rows)
	}
}

func (m *Metrics) committed(stats bundle.CommitStats, height uint64, took time.Duration) {
	if m == nil {
		return
	}
	m.indexedHeight.Set(float64(height))
	m.blocks.Add(float64(stats.Blocks))
	m.rows.Add(float64(stats.Rows))
	m.commitSeconds.Observe(took.Seconds())
	m.malformed.Add(float64(stats.MalformedEventLogs))
	for kind, n := range stats.Unknown {
		m.unknown.WithLabelValues(kind).Add(float64(n))
	}
}
