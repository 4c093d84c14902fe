//go:build e2e

package reliability

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/e2ekit"
)

// peakMemoryBound is the most the serve process may hold resident (VmHWM)
// under BenchmarkServeLoad.
const peakMemoryBound = 512 << 20

// BenchmarkServeLoad runs concurrent clients on loopback against the real
// `nearline serve` for a fixed time (NEARLINE_LOAD_DURATION, default 5s;
// NEARLINE_LOAD_CLIENTS, default 32) with a mix of read methods, and
// reports requests served, requests per second, errors and the serve
// process's peak resident memory. It fails on any error or a peak above
// peakMemoryBound. Run it with:
//
//	go test -tags e2e ./e2e/reliability -run '^$' -bench BenchmarkServeLoad -benchtime 1x
func BenchmarkServeLoad(b *testing.B) {
	duration := 5 * time.Second
	if v := os.Getenv("NEARLINE_LOAD_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("NEARLINE_LOAD_DURATION: %v", err)
		}
		duration = d
	}
	clients := 32
	if v := os.Getenv("NEARLINE_LOAD_CLIENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("NEARLINE_LOAD_CLIENTS %q: want a positive number", v)
		}
		clients = n
	}
	archive := serveChain(b, 77, 300)
	chain, dbURL, srv, addr := archive.chain, archive.dbURL, archive.serve, archive.addr

	mix := loadMix(chain.head, blockHeights(b, dbURL))
	var served, failed atomic.Int64
	var firstErr atomic.Value
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	b.ResetTimer()
	began := time.Now()
	var wg sync.WaitGroup
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			for i := w; ctx.Err() == nil; i += clients {
				body := mix[i%len(mix)]
				resp, err := hc.Post("http://"+addr, "application/json", bytes.NewReader(body))
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err.Error())
					}
					continue
				}
				raw, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				var env e2ekit.Envelope
				switch {
				case err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &env) != nil || env.Error != nil || env.Result == nil:
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("HTTP %d %.300s for %s", resp.StatusCode, raw, body))
				default:
					served.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	hwm, rss := processMemory(b, srv.Pid())

	rps := float64(served.Load()) / elapsed.Seconds()
	b.ReportMetric(float64(served.Load()), "requests")
	b.ReportMetric(rps, "req/s")
	b.ReportMetric(float64(failed.Load()), "errors")
	b.ReportMetric(float64(hwm)/(1<<20), "peak-MiB")
	b.Logf("%d clients for %s: %d requests served (%.0f/s), %d errors; serve peak RSS (VmHWM) %.1f MiB, RSS at the end %.1f MiB",
		clients, elapsed.Round(time.Millisecond), served.Load(), rps, failed.Load(), float64(hwm)/(1<<20), float64(rss)/(1<<20))
	if failed.Load() > 0 {
		b.Errorf("%d requests failed; first: %v", failed.Load(), firstErr.Load())
	}
	if served.Load() == 0 {
		b.Error("no request served")
	}
	if hwm > peakMemoryBound {
		b.Errorf("serve's peak RSS %d MiB exceeds the bound of %d MiB", hwm>>20, peakMemoryBound>>20)
	}
}

// loadMix is the request mix: blocks, chunks and changes at stored
// heights, accounts, access keys, contract state, view calls, changes,
// gas prices and status, all of which have answers.
func loadMix(head uint64, heights []uint64) [][]byte {
	var mix [][]byte
	add := func(method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "load", "method": method, "params": params})
		mix = append(mix, b)
	}
	args := base64.StdEncoding.EncodeToString([]byte(`{"account_id":"alice.near"}`))
	for i, h := range heights {
		add("block", map[string]any{"block_id": h})
		add("chunk", map[string]any{"block_id": h, "shard_id": i % 4})
		add("EXPERIMENTAL_changes_in_block", map[string]any{"block_id": h})
		add("query", map[string]any{"request_type": "view_account", "account_id": "bob.near", "block_id": h})
		add("query", map[string]any{"request_type": "view_access_key_list", "account_id": "carol.near", "block_id": h})
		add("query", map[string]any{"request_type": "view_state", "account_id": "status.near", "prefix_base64": "", "block_id": h})
		add("query", map[string]any{"request_type": "call_function", "account_id": "ft.near", "method_name": "ft_balance_of", "args_base64": args, "block_id": h})
		add("EXPERIMENTAL_changes", map[string]any{"changes_type": "account_changes", "account_ids": []string{"alice.near", "bob.near"}, "block_id": h})
		add("gas_price", []any{h})
		if i%4 == 0 {
			add("block", map[string]any{"finality": "final"})
			add("query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "finality": "final"})
			add("status", map[string]any{})
		}
	}
	return mix
}

// blockHeights returns some heights that have blocks in the archive.
func blockHeights(b *testing.B, dbURL string) []uint64 {
	b.Helper()
	ctx, conn, done := connect(b, dbURL, 30*time.Second)
	defer done()
	rows, err := conn.Query(ctx, `SELECT height FROM blocks WHERE height > 0 AND height % 5 = 0 ORDER BY height`)
	if err != nil {
		b.Fatalf("read heights: %v", err)
	}
	heights, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(heights) < 10 {
		b.Fatalf("read heights: %v (%d)", err, len(heights))
	}
	out := make([]uint64, len(heights))
	for i, h := range heights {
		out[i] = uint64(h)
	}
	return out
}

// Benchmark versions of the harness helpers (which take *testing.T).
