package rpcserve

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the JSON-RPC server's Prometheus metrics. With
// Config.Metrics set, the handler records every request and serves the
// registry at GET /metrics, as nearcore's RPC port does. A nil *Metrics
// records nothing.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
	busy     prometheus.Counter
}

// NewMetrics registers the server's metrics on reg (`nearline run` passes
// the indexer's registry, so one /metrics shows both).
func NewMetrics(reg *prometheus.Registry) (*Metrics, error) {
	m := &Metrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nearline_rpc_requests_total",
			Help: "JSON-RPC requests by method and outcome (ok, forwarded, or the error's cause name)."},
			[]string{"method", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "nearline_rpc_request_seconds",
			Help: "Latency of one JSON-RPC request (one item of a batch).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)},
			[]string{"method"}),
		busy: prometheus.NewCounter(prometheus.CounterOpts{Name: "nearline_rpc_busy_total",
			Help: "HTTP requests refused because MaxConcurrent requests were in flight."}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.seconds, m.busy} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register rpc metrics: %w", err)
		}
	}
	return m, nil
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// observe records one request. Method names outside NEAR's known set are
// counted as "other" so clients cannot grow the label set.
func (m *Metrics) observe(method, outcome string, known bool, took time.Duration) {
	if m == nil {
		return
	}
	if !known {
		method = "other"
	}
	m.requests.WithLabelValues(method, outcome).Inc()
	m.seconds.WithLabelValues(method).Observe(took.Seconds())
}

func (m *Metrics) refused() {
	if m != nil {
		m.busy.Inc()
	}
}
