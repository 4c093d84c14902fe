package e2e

import (
	"strings"
	"testing"
	"time"
)

// faultChainSeed and faultChainHeights name the chain shared by the
// fault, database and SIGTERM tests, so its reference run is made once.
const (
	faultChainSeed    = 33
	faultChainHeights = 800
)

// TestReliabilityFaultyUpstreamWithHealthyFallback indexes through an
// upstream with every fault kind of `nearline sim` switched on at once,
// failing over to a healthy one, and checks the archive equals an
// uninterrupted run from the healthy upstream and that the indexer's
// metrics counted the faults.
func TestReliabilityFaultyUpstreamWithHealthyFallback(t *testing.T) {
	healthy := startSim(t, faultChainSeed, faultChainHeights)
	faulty := startSim(t, faultChainSeed, faultChainHeights,
		"--latency", "1ms", "--latency-jitter", "5ms",
		"--fail-5xx", "0.05", "--fail-internal", "0.05", "--fail-malformed", "0.05", "--fail-truncated", "0.05",
		"--stall", "0.02", "--stall-duration", "5s", "--rate-limit", "150")
	if faulty.head != healthy.head {
		t.Fatalf("faulty head %d, healthy head %d: the two simulators serve different chains", faulty.head, healthy.head)
	}
	want := reference(t, healthy)

	dbURL := freshDatabase(t)
	metricsAddr := freeAddr(t)
	began := time.Now()
	p := start(t, indexArgs(dbURL, faulty.url()+","+healthy.url(), healthy.head,
		"--request-timeout", "1s", "--metrics-listen", metricsAddr)...)
	var last map[string]float64
	for {
		if m, err := scrapeMetrics(metricsAddr); err == nil {
			last = m
		}
		if err, ok := waitExit(p, 100*time.Millisecond); ok {
			if err != nil {
				t.Fatalf("index through the faulty upstream failed: %v\n%s", err, tail(p.output(), 40))
			}
			break
		}
		if time.Since(began) > 4*time.Minute {
			t.Fatal("index through the faulty upstream did not finish within 4 minutes")
		}
	}
	elapsed := time.Since(began)
	requireSameSums(t, want, tableSums(t, dbURL))

	if last == nil {
		t.Fatal("never scraped /metrics while the indexer ran")
	}
	kinds := map[string]float64{}
	var total float64
	for sample, v := range last {
		if strings.HasPrefix(sample, "nearline_upstream_errors_total{") {
			kind := strings.TrimSuffix(strings.TrimPrefix(sample, `nearline_upstream_errors_total{kind="`), `"}`)
			kinds[kind] = v
			total += v
		}
	}
	if total == 0 {
		t.Fatalf("nearline_upstream_errors_total counted no faults; scraped %d samples", len(last))
	}
	if len(kinds) < 2 {
		t.Errorf("upstream errors of only %d kind(s) counted (%v): want several of the injected kinds", len(kinds), kinds)
	}
	t.Logf("indexed %d heights through the faulty upstream in %s; upstream errors counted by the indexer: %v (total %.0f); "+
		"every table equal to the uninterrupted run", healthy.head, elapsed.Round(time.Millisecond), kinds, total)
}
