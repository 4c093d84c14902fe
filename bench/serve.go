package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nearline/nearline/archive"
	"github.com/nearline/nearline/internal/packed"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/store"
)

// load is one measurement: requests/s and latency percentiles.
type load struct {
	rps      float64
	p50, p99 time.Duration
	errors   int
}

// serveRow is one method's figures per target, medians over runs.
type serveRow struct {
	method           string
	serve, sim, bare load
	clients          int
}

// users are genesis accounts of the simulated chain.
var users = []string{"alice.near", "bob.near", "carol.near", "dave.near", "eve.near", "frank.near", "grace.near", "heidi.near"}

// requestMaker builds one random request body of a method at height h.
type requestMaker func(rng *rand.Rand, h uint64) string

var ftBalanceArgs = func(account string) string {
	return base64.StdEncoding.EncodeToString([]byte(`{"account_id":"` + account + `"}`))
}

var methods = []struct {
	name string
	make requestMaker
}{
	{"block", func(_ *rand.Rand, h uint64) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":%d}}`, h)
	}},
	{"chunk", func(rng *rand.Rand, h uint64) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"chunk","params":{"block_id":%d,"shard_id":%d}}`, h, rng.IntN(6))
	}},
	{"view_account", func(rng *rand.Rand, h uint64) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"query","params":{"request_type":"view_account","account_id":%q,"block_id":%d}}`,
			users[rng.IntN(len(users))], h)
	}},
	{"view_state", func(rng *rand.Rand, h uint64) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"query","params":{"request_type":"view_state","account_id":"status.near","prefix_base64":"","block_id":%d}}`, h)
	}},
	{"changes", func(rng *rand.Rand, h uint64) string {
		a, b := users[rng.IntN(len(users))], users[rng.IntN(len(users))]
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"changes","params":{"changes_type":"account_changes","account_ids":[%q,%q],"block_id":%d}}`, a, b, h)
	}},
	{"call_function", func(rng *rand.Rand, h uint64) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"query","params":{"request_type":"call_function","account_id":"ft.near","method_name":"ft_balance_of","args_base64":%q,"block_id":%d}}`,
			ftBalanceArgs(users[rng.IntN(len(users))]), h)
	}},
}

// serve measures the archive server, the simulator and the bare handler.
func (e *benchEnv) serve(ctx context.Context) error {
	if e.indexed == "" {
		return fmt.Errorf("serve needs the backfill phase")
	}
	st, err := store.Open(ctx, e.indexed, store.Config{MaxConns: 20, ApplicationName: "nearline-serve"}, e.logger)
	if err != nil {
		return err
	}
	defer st.Close()
	vm, err := nearvm.New(ctx, nearvm.Config{}, nil)
	if err != nil {
		return err
	}
	defer vm.Close(context.WithoutCancel(ctx))
	backend, err := archive.New(st, vm, archive.Config{}, e.logger)
	if err != nil {
		return err
	}
	handler, err := rpcserve.NewHandler(backend, rpcserve.Config{}, e.logger)
	if err != nil {
		return err
	}
	archiveSrv := httptest.NewServer(handler)
	defer archiveSrv.Close()
	pool, err := pgxpool.New(ctx, e.indexed+"&pool_max_conns=20")
	if err != nil {
		return fmt.Errorf("open bare pool: %w", err)
	}
	defer pool.Close()
	codec, err := packed.NewCodec()
	if err != nil {
		return err
	}
	bare := httptest.NewServer(bareHandler{pool: pool, codec: codec})
	defer bare.Close()

	var heights []uint64
	rows, err := st.Pool().Query(ctx, "SELECT height FROM blocks ORDER BY height")
	if err != nil {
		return fmt.Errorf("list heights: %w", err)
	}
	for rows.Next() {
		var h int64
		if err := rows.Scan(&h); err != nil {
			return fmt.Errorf("list heights: %w", err)
		}
		heights = append(heights, uint64(h))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list heights: %w", err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * e.o.clients, MaxIdleConns: 4 * e.o.clients}}
	rng := rand.New(rand.NewPCG(e.o.seed, 7))
	targets := []struct {
		name string
		url  string
	}{{"serve", archiveSrv.URL}, {"sim", e.chain.plainURL}, {"bare", bare.URL}}
	for _, m := range methods {
		bodies := make([][]byte, 2048)
		for i := range bodies {
			bodies[i] = []byte(m.make(rng, heights[rng.IntN(len(heights))]))
		}
		row := serveRow{method: m.name, clients: e.o.clients}
		for _, t := range targets {
			// Warm: connections, caches and the contract compile.
			if _, err := runLoad(ctx, client, t.url, bodies, e.o.clients, 300*time.Millisecond); err != nil {
				return fmt.Errorf("%s %s: %w", t.name, m.name, err)
			}
			var runs []load
			for range e.o.runs {
				l, err := runLoad(ctx, client, t.url, bodies, e.o.clients, e.o.serveTime)
				if err != nil {
					return fmt.Errorf("%s %s: %w", t.name, m.name, err)
				}
				runs = append(runs, l)
			}
			l := medianLoad(runs)
			fmt.Fprintf(os.Stderr, "%-13s %-5s %8.0f req/s  p50 %-9s p99 %-9s errors %d\n", m.name, t.name, l.rps, l.p50, l.p99, l.errors)
			switch t.name {
			case "serve":
				row.serve = l
			case "sim":
				row.sim = l
			default:
				row.bare = l
			}
		}
		e.report.serve = append(e.report.serve, row)
	}
	// One client: the latency of a warm ft_balance_of call.
	bodies := make([][]byte, 2048)
	for i := range bodies {
		bodies[i] = []byte(methods[5].make(rng, heights[rng.IntN(len(heights))]))
	}
	row := serveRow{method: "call_function (1 client)", clients: 1}
	for _, t := range targets[:2] {
		var runs []load
		for range e.o.runs {
			l, err := runLoad(ctx, client, t.url, bodies, 1, e.o.serveTime)
			if err != nil {
				return err
			}
			runs = append(runs, l)
		}
		l := medianLoad(runs)
		fmt.Fprintf(os.Stderr, "%-13s %-5s %8.0f req/s  p50 %-9s p99 %-9s (1 client)\n", "call_function", t.name, l.rps, l.p50, l.p99)
		if t.name == "serve" {
			row.serve = l
		} else {
			row.sim = l
		}
	}
	e.report.single = &row
	return nil
}

// runLoad posts bodies from clients concurrent clients for d.
func runLoad(ctx context.Context, client *http.Client, url string, bodies [][]byte, clients int, d time.Duration) (load, error) {
	deadline := time.Now().Add(d)
	lat := make([][]time.Duration, clients)
	errs := make([]int, clients)
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	began := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := c * 131
			var buf bytes.Buffer
			for time.Now().Before(deadline) && ctx.Err() == nil {
				body := bodies[i%len(bodies)]
				t := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				buf.Reset()
				_, err = io.Copy(&buf, resp.Body)
				resp.Body.Close()
				lat[c] = append(lat[c], time.Since(t))
				if err != nil || resp.StatusCode != http.StatusOK {
					errs[c]++
				} else if i%16 == 0 && !isResult(buf.Bytes()) {
					errs[c]++
					if errs[c] == 1 {
						fmt.Fprintf(os.Stderr, "error answer from %s to %s: %.300s\n", url, body, buf.Bytes())
					}
				}
				i++
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	if firstErr != nil {
		return load{}, firstErr
	}
	var all []time.Duration
	n := 0
	for c := range clients {
		all = append(all, lat[c]...)
		n += errs[c]
	}
	if len(all) == 0 {
		return load{}, fmt.Errorf("no request completed")
	}
	slices.Sort(all)
	return load{
		rps: float64(len(all)) / elapsed.Seconds(),
		p50: all[len(all)/2], p99: all[len(all)*99/100], errors: n,
	}, nil
}

func isResult(body []byte) bool {
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	return json.Unmarshal(body, &env) == nil && len(env.Result) > 0
}

func medianLoad(runs []load) load {
	slices.SortFunc(runs, func(a, b load) int {
		switch {
		case a.rps < b.rps:
			return -1
		case a.rps > b.rps:
			return 1
		}
		return 0
	})
	m := runs[len(runs)/2]
	p50s := make([]time.Duration, len(runs))
	p99s := make([]time.Duration, len(runs))
	for i, r := range runs {
		p50s[i], p99s[i] = r.p50, r.p99
	}
	slices.Sort(p50s)
	slices.Sort(p99s)
	m.p50, m.p99 = p50s[len(runs)/2], p99s[len(runs)/2]
	return m
}
