package sim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkProduce measures chain production with the default mix of
// transactions (contract calls included).
func BenchmarkProduce(b *testing.B) {
	cfg := DefaultConfig()
	cfg.BlockTime, cfg.MaxHeight = 0, 1000
	for b.Loop() {
		n, err := New(context.Background(), cfg, nil)
		require.NoError(b, err)
		require.NoError(b, n.ProduceTo(context.Background(), cfg.MaxHeight))
		_ = n.Close(context.Background())
	}
	b.ReportMetric(float64(cfg.MaxHeight+1)*float64(b.N)/b.Elapsed().Seconds(), "heights/s")
}

// BenchmarkServe measures answered requests per second over HTTP for the
// methods an indexer calls (block, chunk, changes) and a state query.
func BenchmarkServe(b *testing.B) {
	cfg := DefaultConfig()
	cfg.BlockTime, cfg.MaxHeight = 0, 300
	n, err := New(context.Background(), cfg, nil)
	require.NoError(b, err)
	require.NoError(b, n.ProduceTo(context.Background(), cfg.MaxHeight))
	srv := startBenchServer(b, n)
	bodies := [][]byte{}
	for h := 0; h <= 300; h += 7 {
		bodies = append(bodies,
			[]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":%d}}`, h)),
			[]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"chunk","params":{"block_id":%d,"shard_id":%d}}`, h, h%4)),
			[]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"EXPERIMENTAL_changes","params":{"changes_type":"account_changes","account_ids":["alice.near","bob.near"],"block_id":%d}}`, h)),
			[]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"query","params":{"request_type":"view_account","account_id":"alice.near","block_id":%d}}`, h)))
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ResetTimer()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			resp, err := client.Post(srv, "application/json", bytes.NewReader(bodies[i%len(bodies)]))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			i++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func startBenchServer(b *testing.B, n *Node) string {
	srv := newBenchHTTP(n)
	b.Cleanup(srv.Close)
	return srv.URL
}
