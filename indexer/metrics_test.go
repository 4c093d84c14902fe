package indexer_test

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/store/storetest"
)

func TestMetricsReportProgress(t *testing.T) {
	t.Parallel()
	s := storetest.NewStore(t)
	m := indexer.NewMetrics()
	m.UpstreamError("http_5xx")
	m.UpstreamError("http_5xx")
	ix, err := indexer.New(indexer.Config{From: ptr(1), To: ptr(30), BatchSize: 10, Metrics: m}, newFakeSource(testChain(), 40), s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(context.Background()))

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	text := string(body)
	require.Contains(t, text, "nearline_indexed_height 30\n")
	require.Contains(t, text, "nearline_head_height 40\n")
	require.Contains(t, text, "nearline_indexed_blocks_total 26\n", "30 heights, 4 of them skipped (5, 17-19)")
	require.Contains(t, text, `nearline_upstream_errors_total{kind="http_5xx"} 2`)
	require.Contains(t, text, "nearline_commit_seconds_count 3\n")
	require.Regexp(t, `nearline_indexed_rows_total [1-9][0-9]+`, text)
	require.Regexp(t, `nearline_blocks_per_second [1-9]`, text, "set by the final progress line")
	require.Regexp(t, `nearline_rows_per_second [1-9]`, text)
}
