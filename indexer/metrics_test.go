package indexer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/metrics"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

func TestMetricsReportProgress(t *testing.T) {
	t.Parallel()
	_, src, s := newFakeRun(t, 40)
	m, reg := newMetrics(t)
	m.UpstreamError("http_5xx")
	m.UpstreamError("http_5xx")
	ix, err := indexer.New(indexer.Config{From: ptr(1), To: ptr(30), BatchSize: 10, Metrics: m}, src, s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(context.Background()))

	text := scrape(t, reg)
	require.Contains(t, text, "nearline_indexed_height 30\n")
	require.Contains(t, text, "nearline_head_height 40\n")
	require.Contains(t, text, "nearline_indexed_blocks_total 26\n", "30 heights, 4 of them skipped (5, 17-19)")
	require.Contains(t, text, `nearline_upstream_errors_total{kind="http_5xx"} 2`)
	require.Contains(t, text, "nearline_commit_seconds_count 3\n")
	require.Regexp(t, `nearline_indexed_rows_total [1-9][0-9]+`, text)
	require.Regexp(t, `nearline_blocks_per_second [1-9]`, text, "set by the final progress line")
	require.Regexp(t, `nearline_rows_per_second [1-9]`, text)
}

// TestUnknownVariantsAreCountedAndLoggedOnce indexes blocks carrying a state
// change type Nearline does not model: the indexer runs through them,
// counts each in nearline_unknown_variants_total{kind} and logs the kind
// once.
func TestUnknownVariantsAreCountedAndLoggedOnce(t *testing.T) {
	t.Parallel()
	c := testChain()
	src := newFakeSource(c, 40)
	const change = `{"cause":{"type":"transaction_processing","tx_hash":"AA2wfmoibstL4ALMHsyEdkf9mSxBtX3xkC2fn28d3WEP"},"type":"gas_key_nonce_update","change":{"account_id":"alice.near","public_key":"ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847","index":1,"nonce":3}}`
	for _, h := range []uint64{8, 12, 25} {
		b, ok := c.Bundle(h)
		require.True(t, ok)
		var view near.StateChangeWithCauseView
		require.NoError(t, json.Unmarshal([]byte(change), &view))
		b.Changes = append(b.Changes, bundle.StateChange{View: view, JSON: json.RawMessage(change)})
		src.override[h] = b
	}
	var logs bytes.Buffer
	m, reg := newMetrics(t)
	ix, err := indexer.New(indexer.Config{From: ptr(1), To: ptr(30), BatchSize: 10, Metrics: m}, src, storetest.NewStore(t),
		slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	require.NoError(t, ix.Run(context.Background()), "an unknown variant never stops the indexer")

	require.Contains(t, scrape(t, reg), `nearline_unknown_variants_total{kind="state_change:gas_key_nonce_update"} 3`)
	require.Equal(t, 1, strings.Count(logs.String(), "kind=state_change:gas_key_nonce_update"), "logged once per kind:\n%s", logs.String())
}

// TestMalformedEventLogsAreCountedAndLogged indexes blocks whose
// transactions' receipts log an EVENT_JSON of NEP-141 that does not follow
// it: the indexer runs through them, nearline_malformed_event_logs_total
// counts each and the store logs each with its receipt id.
func TestMalformedEventLogsAreCountedAndLogged(t *testing.T) {
	t.Parallel()
	c := testChain()
	src := newFakeSource(c, 40)
	const bad = `EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_transfer","data":[{"old_owner_id":"alice.near","amount":"1"}]}`
	const good = `EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"alice.near","amount":"1"}]}`
	for _, h := range []uint64{8, 12, 25} {
		b, ok := c.Bundle(h)
		require.True(t, ok)
		b.TxStatuses = append([]bundle.TxStatus(nil), b.TxStatuses...)
		var view near.FinalExecutionOutcomeView
		require.NoError(t, json.Unmarshal(b.TxStatuses[0].JSON, &view))
		view.ReceiptsOutcome[0].Outcome.Logs = []string{bad, good}
		raw, err := json.Marshal(view)
		require.NoError(t, err)
		b.TxStatuses[0].JSON, b.TxStatuses[0].Body = raw, nil
		src.override[h] = b
	}
	var logs bytes.Buffer
	s, err := store.Open(context.Background(), storetest.NewDatabaseURL(t), store.Config{MaxConns: 4}, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(s.Close)
	m, reg := newMetrics(t)
	ix, err := indexer.New(indexer.Config{From: ptr(1), To: ptr(30), BatchSize: 10, Metrics: m}, src, s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(context.Background()), "a malformed event log never stops the indexer")

	require.Contains(t, scrape(t, reg), "nearline_malformed_event_logs_total 3\n")
	require.Equal(t, 3, strings.Count(logs.String(), "malformed event log skipped"), logs.String())
	var minted int
	require.NoError(t, s.Pool().QueryRow(context.Background(), `SELECT count(*) FROM ft_events WHERE event = 'ft_mint'`).Scan(&minted))
	require.Equal(t, 3, minted, "the well-formed log beside each malformed one is kept")
}

// newMetrics returns the indexer's metrics on a registry of their own.
func newMetrics(t *testing.T) (*indexer.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := indexer.NewMetrics(reg)
	require.NoError(t, err)
	return m, reg
}

// scrape serves reg's metrics over HTTP and returns the text a scraper
// reads.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	srv := httptest.NewServer(metrics.Handler(reg))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}
