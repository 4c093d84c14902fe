//go:build e2e

package reliability

import (
	"strings"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/store/storetest"
)

// faultChainSeed and faultChainHeights name the chain shared by the
// fault, database and SIGTERM tests, so its reference run is made once.
const (
	faultChainSeed    = 33
	faultChainHeights = 800
)

// TestReliabilityFaultyUpstreamWithHealthyFallback indexes through an
// upstream with every fault kind of `nearline sim` switched on at once,
// failing over to a healthy one, then through a faulty upstream alone (at
// lower rates), and checks each archive equals an uninterrupted run from
// the healthy upstream and that the indexer's metrics counted the faults
// (alone: every kind).
func TestReliabilityFaultyUpstreamWithHealthyFallback(t *testing.T) {
	t.Parallel()
	healthy := startSim(t, faultChainSeed, faultChainHeights)
	faulty := startSim(t, faultChainSeed, faultChainHeights,
		"--latency", "1ms", "--latency-jitter", "5ms",
		"--fail-5xx", "0.05", "--fail-internal", "0.05", "--fail-malformed", "0.05", "--fail-truncated", "0.05",
		"--stall", "0.02", "--stall-duration", "5s", "--rate-limit", "150")
	if faulty.head != healthy.head {
		t.Fatalf("faulty head %d, healthy head %d: the two simulators serve different chains", faulty.head, healthy.head)
	}
	want := reference(t, healthy)

	dbURL := e2ekit.FreshDatabase(t)
	kinds, total, elapsed := indexCountingFaults(t, dbURL, faulty.url()+","+healthy.url(), healthy.head)
	storetest.RequireSameSums(t, want, tableSums(t, dbURL))
	if total == 0 {
		t.Fatal("nearline_upstream_errors_total counted no faults")
	}
	// With a healthy endpoint beside it, the client keeps to the endpoint
	// that answered last: how many faults it meets before it settles on the
	// healthy one depends on how many calls start at once (one, while the
	// memory budget weighs the first block), so only "some" is asked here;
	// every kind is required of the faulty upstream alone, below.
	t.Logf("faulty,healthy: indexed %d heights in %s; upstream errors counted by the indexer: %v (total %.0f); "+
		"every table equal to the uninterrupted run", healthy.head, elapsed.Round(time.Millisecond), kinds, total)

	// The faulty upstream alone, at lower rates (a call fails after 8
	// attempts): retries by themselves must get every block right, and
	// every fault kind is met and counted.
	shortHead, _ := lastBlockUpTo(t, healthy.c, 200)
	short := *healthy
	short.head = shortHead
	wantShort := reference(t, &short)
	// The same chain as the reference's, to the same tip: a status is
	// what the upstream's head lets it be (a yield made near shortHead
	// ends up to the yield timeout later), so a shorter chain would store
	// some of them at an earlier stage than the reference did.
	alone := startSim(t, faultChainSeed, faultChainHeights,
		"--latency", "1ms", "--latency-jitter", "3ms",
		"--fail-5xx", "0.02", "--fail-internal", "0.02", "--fail-malformed", "0.02", "--fail-truncated", "0.02",
		"--stall", "0.01", "--stall-duration", "5s", "--rate-limit", "300")
	dbURL = e2ekit.FreshDatabase(t)
	kinds, total, elapsed = indexCountingFaults(t, dbURL, alone.url(), shortHead)
	storetest.RequireSameSums(t, wantShort, tableSums(t, dbURL))
	for _, kind := range []string{"http_5xx", "internal_error", "malformed", "timeout", "http_429"} {
		if kinds[kind] == 0 {
			t.Errorf("no %s fault counted (counted: %v)", kind, kinds)
		}
	}
	t.Logf("faulty alone: indexed %d heights in %s; upstream errors counted: %v (total %.0f); every table equal to the uninterrupted run",
		shortHead, elapsed.Round(time.Millisecond), kinds, total)
}

// indexCountingFaults runs index from upstreams to the height to with
// --metrics-listen, scraping /metrics while it runs, and returns the last
// scrape's upstream error counts by kind, their total and the run's time.
func indexCountingFaults(t *testing.T, dbURL, upstreams string, to uint64) (map[string]float64, float64, time.Duration) {
	t.Helper()
	began := time.Now()
	p := binary.Start(t, indexArgs(dbURL, upstreams, to, "--upstream-timeout", "1s", "--metrics-listen", e2ekit.AnyPort)...)
	metricsAddr := p.ListenAddr(t, "serving metrics")
	var last map[string]float64
	for {
		if m, err := e2ekit.ScrapeMetrics(metricsAddr); err == nil {
			last = m
		}
		if err, ok := p.WaitExit(100 * time.Millisecond); ok {
			if err != nil {
				t.Fatalf("index from %s failed: %v\n%s", upstreams, err, e2ekit.Tail(p.Output(), 40))
			}
			break
		}
		if time.Since(began) > 4*time.Minute {
			t.Fatalf("index from %s did not finish within 4 minutes", upstreams)
		}
	}
	elapsed := time.Since(began)
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
	return kinds, total, elapsed
}
