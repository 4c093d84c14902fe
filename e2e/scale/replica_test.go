//go:build e2e

package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/docs"
	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/internal/wait"
)

// syncInfo returns the sync_info members of a status result.
func syncInfo(t *testing.T, c *e2ekit.Client) map[string]json.RawMessage {
	t.Helper()
	env, err := c.Call("status", nil)
	if err != nil || env.Result == nil {
		t.Fatalf("status from %s: %v %s", c.URL, err, env.Error)
	}
	var view struct {
		SyncInfo map[string]json.RawMessage `json:"sync_info"`
	}
	if err := json.Unmarshal(env.Result, &view); err != nil {
		t.Fatalf("decode status from %s: %v", c.URL, err)
	}
	return view.SyncInfo
}

// sameBytes is byte-for-byte equality of two results (or two errors).
func sameBytes(a, b json.RawMessage) bool { return bytes.Equal(a, b) }

// finalHeight is the height of the block `final` selects.
func finalHeight(t *testing.T, c *e2ekit.Client) uint64 {
	t.Helper()
	env, err := c.Call("block", map[string]any{"finality": "final"})
	if err != nil || env.Result == nil {
		t.Fatalf("final block from %s: %v %s", c.URL, err, env.Error)
	}
	var b struct {
		Header struct {
			Height uint64 `json:"height"`
		} `json:"header"`
	}
	if err := json.Unmarshal(env.Result, &b); err != nil {
		t.Fatalf("decode block from %s: %v", c.URL, err)
	}
	return b.Header.Height
}

// lagGauge is the replica lag sample of addr's /metrics, and whether there
// is one.
func lagGauge(t *testing.T, addr string) (float64, bool) {
	t.Helper()
	m, err := e2ekit.ScrapeMetrics(addr)
	if err != nil {
		t.Fatalf("scrape %s: %v", addr, err)
	}
	v, ok := m["nearline_replica_lag_seconds"]
	return v, ok
}

// TestServeFromAStreamingReplica: a PostgreSQL primary and a streaming
// replica of it (pg_basebackup -R -X stream), the archive indexed on the
// primary from `nearline sim`, docs/database.md's read-only role created there
// before any block. Once the replica has replayed up to the indexer's
// cursor, `serve` on the replica under the read-only role answers a seeded
// sample of the differential requests (every method, param form and error
// kind: blocks, chunks, changes, tx statuses, receipts, queries with
// call_function, malformed input) byte for byte as `serve` on the primary. status has
// sync_info.replica_lag_seconds on the replica only; /metrics has
// nearline_replica_lag_seconds on the replica only. With replay paused on
// the replica and more blocks indexed on the primary, the replica serves
// the old head and health with --health-max-lag fails with NO_NEW_BLOCKS
// saying the replica is behind; after replay resumes, health passes again
// and the replica serves the new blocks as the primary does. With the
// primary stopped, the replica (its WAL receiver disconnected, all it
// received replayed) is not counted as caught up: health fails again.
func TestServeFromAStreamingReplica(t *testing.T) {
	t.Parallel()
	const (
		maxHeight = 200
		maxLag    = 2 * time.Second
	)
	host := newPGHost(t)
	primary := startCluster(t, host.Primary, "primary")
	replica := startCluster(t, primary.Replica, "replica")
	execSQL(t, primary, "postgres", "CREATE DATABASE nearline")
	primaryURL := primary.URL("postgres", "nearline")

	// Blocks an hour in the future: their age never exceeds
	// --health-max-lag, so only the replica's lag can fail health.
	genesisPath := filepath.Join(t.TempDir(), "genesis.json")
	simAddr, sim := binary.Sim(t, "--seed", "5", "--shards", "4", "--block-time", "0",
		"--max-height", strconv.Itoa(maxHeight), "--genesis-out", genesisPath, "--protocol-version", "77",
		"--yield-timeout", "20", "--genesis-time", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	shape := e2ekit.ReadShape(t, sim, maxHeight-20)

	if out, err := binary.Run(t, time.Minute, "migrate", "--database-url", primaryURL); err != nil {
		t.Fatalf("nearline migrate: %v\n%s", err, out)
	}
	grants := docs.SQL(t, "docs/database.md", "## The read-only role")
	if len(grants) != 1 || !strings.Contains(grants[0], "nearline_reader") {
		t.Fatalf("docs/database.md's read-only role: want one SQL block creating nearline_reader, got %q", grants)
	}
	execSQL(t, primary, "nearline", grants[0])

	first := shape.Head - 40
	binary.Index(t, 5*time.Minute, primaryURL, "http://"+simAddr, first, "--genesis", genesisPath)
	replay := e2ekit.WaitCursor(t, replica.URL("postgres", "nearline"), first, 2*time.Minute)
	t.Logf("replica replayed the cursor to %d", replay)

	readerURL := replica.URL("nearline_reader", "nearline")
	_, primaryAddr, onPrimary := binary.Serve(t, primaryURL, "--forward-url", "http://"+simAddr)
	_, replicaAddr, onReplica := binary.Serve(t, readerURL, "--forward-url", "http://"+simAddr)
	_, _, health := binary.Serve(t, readerURL, "--health-max-lag", maxLag.String())
	if n := queryInt(t, replica, "postgres", `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = 'nearline-serve' AND usename = 'nearline_reader'`); n == 0 {
		t.Fatal("no connection of serve as nearline_reader on the replica")
	}

	// A sample of the differential requests, at the heights indexed: every
	// method reads its tables as the read-only role on the replica.
	compared := e2ekit.ChainShape{GenesisHeight: shape.GenesisHeight, Head: first}
	reqs := e2ekit.SampleRequests(t, sim, compared, 12, 5)
	tally := e2ekit.CompareWith(t, onPrimary, onReplica, reqs, sameBytes)
	e2ekit.LogTally(t, tally)
	t.Logf("compared %d requests byte for byte over heights %d..%d", e2ekit.Total(tally), compared.GenesisHeight, compared.Head+2)
	e2ekit.RequireEveryMethod(t, tally)

	// The lag: in status and /metrics on the replica only.
	if v, ok := syncInfo(t, onPrimary)["replica_lag_seconds"]; ok {
		t.Errorf("status on the primary has replica_lag_seconds %s; want nearcore's sync_info", v)
	}
	if _, ok := syncInfo(t, onReplica)["replica_lag_seconds"]; !ok {
		t.Error("status on the replica has no replica_lag_seconds")
	}
	if v, ok := lagGauge(t, primaryAddr); ok {
		t.Errorf("/metrics on the primary has nearline_replica_lag_seconds %v", v)
	}
	if _, ok := lagGauge(t, replicaAddr); !ok {
		t.Error("/metrics on the replica has no nearline_replica_lag_seconds")
	}
	healthy := func() bool {
		env, err := health.Call("health", nil)
		return err == nil && env.Error == nil && string(env.Result) == "null"
	}
	wait.For(t, time.Minute, "health on the caught-up replica", healthy)

	// Replay paused, more blocks on the primary: the replica falls behind.
	execSQL(t, replica, "postgres", "SELECT pg_wal_replay_pause()")
	binary.Index(t, 5*time.Minute, primaryURL, "http://"+simAddr, shape.Head, "--genesis", genesisPath)
	var failure string
	wait.For(t, time.Minute, "health to fail on the paused replica", func() bool {
		env, err := health.Call("health", nil)
		if err != nil || env.Error == nil {
			return false
		}
		failure = string(env.Error)
		return true
	})
	if !strings.Contains(failure, `"NO_NEW_BLOCKS"`) || !strings.Contains(failure, "The database replica is") ||
		!strings.Contains(failure, "behind its primary") {
		t.Errorf("health on the paused replica: %s; want NO_NEW_BLOCKS saying the replica is behind its primary", failure)
	}
	t.Logf("health on the paused replica: %s", failure)
	if got, want := finalHeight(t, onReplica), finalHeight(t, onPrimary); got >= want {
		t.Errorf("paused replica serves final height %d, primary %d: want the replica behind", got, want)
	}
	info := syncInfo(t, health)
	var lag float64
	if err := json.Unmarshal(info["replica_lag_seconds"], &lag); err != nil || lag <= maxLag.Seconds() {
		t.Errorf("status on the paused replica: replica_lag_seconds %s (%v); want above %s", info["replica_lag_seconds"], err, maxLag)
	}
	if string(info["syncing"]) != "true" {
		t.Errorf("status on the paused replica (with --health-max-lag): syncing %s, want true", info["syncing"])
	}
	if v, ok := lagGauge(t, replicaAddr); !ok || v <= maxLag.Seconds() {
		t.Errorf("/metrics on the paused replica: nearline_replica_lag_seconds %v (present %v); want above %s", v, ok, maxLag)
	}
	for _, c := range []struct {
		url     string
		replica bool
	}{{replica.URL("postgres", "nearline"), true}, {primaryURL, false}} {
		out, err := binary.Run(t, time.Minute, "status", "--database-url", c.url)
		if err != nil {
			t.Fatalf("nearline status: %v\n%s", err, out)
		}
		if strings.Contains(out, "replica lag:") != c.replica {
			t.Errorf("nearline status on the %s: want a replica lag line only on the replica\n%s", map[bool]string{true: "paused replica", false: "primary"}[c.replica], out)
		}
	}

	// Replay resumed: healthy again, and the new blocks served as the
	// primary serves them.
	execSQL(t, replica, "postgres", "SELECT pg_wal_replay_resume()")
	wait.For(t, time.Minute, "health on the replica after replay resumed", healthy)
	e2ekit.WaitCursor(t, replica.URL("postgres", "nearline"), shape.Head, 2*time.Minute)
	if got, want := finalHeight(t, onReplica), finalHeight(t, onPrimary); got != want {
		t.Errorf("resumed replica serves final height %d, primary %d", got, want)
	}
	var more []e2ekit.Request
	for h := first + 1; h <= shape.Head; h++ {
		more = append(more, e2ekit.BlockRequests(t, sim, h)...)
	}
	e2ekit.RequireResults(t, e2ekit.CompareWith(t, onPrimary, onReplica, more, sameBytes), "block", "chunk")
	t.Logf("after resume: %d more requests byte for byte over heights %d..%d; replica_lag_seconds %s", len(more), first+1, shape.Head,
		syncInfo(t, onReplica)["replica_lag_seconds"])

	// The primary gone, the replica's WAL receiver is disconnected. It has
	// replayed all it received, yet it is not counted as caught up: its lag
	// is the age of the last transaction it replayed (the second index run,
	// some seconds ago), and health fails saying so.
	stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := primary.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	wait.For(t, time.Minute, "health to fail on the replica cut off from its primary", func() bool {
		env, err := health.Call("health", nil)
		return err == nil && env.Error != nil && strings.Contains(string(env.Error), "The database replica is")
	})
	if _, ok := syncInfo(t, onReplica)["replica_lag_seconds"]; !ok {
		t.Error("status on the replica cut off from its primary has no replica_lag_seconds")
	}
}
