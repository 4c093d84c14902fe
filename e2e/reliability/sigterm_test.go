//go:build e2e

package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/store/storetest"
)

// TestReliabilityIndexSIGTERM stops `nearline index` with SIGTERM at three
// moments: each time it exits 0 within seconds, leaving cursor and data in
// agreement (no row above the cursor, blocks linked); a restart then
// reaches --to with the content of an uninterrupted run.
func TestReliabilityIndexSIGTERM(t *testing.T) {
	t.Parallel()
	chain, want, dbURL := faultRun(t)

	var stoppedAt []uint64
	// The first stop usually lands in the start-up migration, the others
	// once the cursor has moved on by 50 and 200 heights, a moment into
	// the next batch.
	var last uint64
	for i, ahead := range []uint64{0, 50, 200} {
		p := binary.Start(t, indexArgs(dbURL, chain.url(), chain.head, "--batch-size", fmt.Sprint(5+10*i))...)
		// These pauses place the signal, they wait for nothing: whatever the
		// moment, the archive must be consistent after the exit.
		if ahead == 0 {
			time.Sleep(300 * time.Millisecond)
		} else {
			e2ekit.WaitCursor(t, dbURL, last+ahead, time.Minute)
			time.Sleep(30 * time.Millisecond)
		}
		if _, ok := p.Exited(); ok {
			t.Fatalf("index exited before SIGTERM %d:\n%s", i+1, e2ekit.Tail(p.Output(), 20))
		}
		began := time.Now()
		err, ok := stop(t, p, syscall.SIGTERM, 20*time.Second)
		if !ok {
			t.Fatalf("index did not exit within 20s of SIGTERM %d", i+1)
		}
		if err != nil {
			t.Fatalf("index exited with %v after SIGTERM %d, want 0\n%s", err, i+1, e2ekit.Tail(p.Output(), 20))
		}
		cursor := requireConsistent(t, dbURL)
		stoppedAt = append(stoppedAt, cursor)
		last = cursor
		t.Logf("SIGTERM %d: exit 0 after %s; cursor %d, data agrees with it", i+1, time.Since(began).Round(time.Millisecond), cursor)
	}
	if out, err := binary.Run(t, 5*time.Minute, indexArgs(dbURL, chain.url(), chain.head)...); err != nil {
		t.Fatalf("restart after SIGTERMs: %v\n%s", err, e2ekit.Tail(out, 30))
	}
	storetest.RequireSameSums(t, want, tableSums(t, dbURL))
	t.Logf("stopped at cursors %v, then reached %d; every table equal to the uninterrupted run", stoppedAt, chain.head)
}

// heightColumns are the columns that tie a row to the block that wrote it
// where that is not block_height: outcomes and token events by the block
// of their transaction (a receipt's own block may be later), activity by
// the block whose commit wrote it.
var heightColumns = map[string]string{
	"blocks": "height", "skipped_heights": "next_height", "protocol_configs": "first_height", "account_bases": "height",
	"execution_outcomes": "tx_block_height", "ft_events": "tx_block_height", "nft_events": "tx_block_height",
	"mt_events": "tx_block_height", "account_activity": "source_height",
	// The tables under the views of the five above (migrations 00018, 00020).
	"ft_events_ids": "tx_block_height", "nft_events_ids": "tx_block_height", "mt_events_ids": "tx_block_height",
	"execution_outcomes_ids": "tx_block_height",
	// Checked through its view: its source height is computed (migration
	// 00021), and its block_height is where a token event executed.
	"account_activity_ids": "",
}

// blockTables returns every table and view of the schema whose rows a
// block's commit writes, with the column that names that block: those of
// heightColumns, and every other one with a block_height column, so that a
// table added later is checked too.
func blockTables(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	tables := maps.Clone(heightColumns)
	for table, columns := range storetest.Columns(t, conn) {
		if _, ok := tables[table]; !ok && slices.Contains(columns, "block_height") {
			tables[table] = "block_height"
		}
	}
	maps.DeleteFunc(tables, func(_, column string) bool { return column == "" })
	return tables
}

// requireConsistent checks that the cursor names the highest stored block,
// that no table holds a row above it, and that every stored block links to
// the one before it; it returns the cursor height.
func requireConsistent(t *testing.T, dbURL string) uint64 {
	t.Helper()
	ctx, conn, done := connect(t, dbURL, time.Minute)
	defer done()
	var migrated bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('indexer_cursor') IS NOT NULL`).Scan(&migrated); err != nil {
		t.Fatalf("look for the schema: %v", err)
	}
	if !migrated {
		return 0 // stopped while migrating: the migration was rolled back
	}
	var cursor int64
	var cursorHash string
	err := conn.QueryRow(ctx, `SELECT height, hash FROM indexer_cursor WHERE name = 'main'`).Scan(&cursor, &cursorHash)
	if errors.Is(err, pgx.ErrNoRows) {
		var blocks int64
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM blocks`).Scan(&blocks); err != nil || blocks != 0 {
			t.Errorf("no cursor but %d blocks (%v)", blocks, err)
		}
		return 0
	}
	if err != nil {
		t.Fatalf("read cursor: %v", err)
	}
	var top int64
	var topHash string
	if err := conn.QueryRow(ctx, `SELECT height, hash FROM blocks ORDER BY height DESC LIMIT 1`).Scan(&top, &topHash); err != nil {
		t.Fatalf("read top block: %v", err)
	}
	if top != cursor || topHash != cursorHash {
		t.Errorf("cursor %d %s, highest block %d %s", cursor, cursorHash, top, topHash)
	}
	for table, col := range blockTables(t, conn) {
		var above int64
		q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE %s > $1`, pgx.Identifier{table}.Sanitize(), pgx.Identifier{col}.Sanitize())
		if err := conn.QueryRow(ctx, q, cursor).Scan(&above); err != nil {
			t.Fatalf("count %s above the cursor: %v", table, err)
		}
		if above > 0 {
			t.Errorf("%s has %d rows above the cursor %d", table, above, cursor)
		}
	}
	var broken int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM (
		SELECT prev_hash, lag(hash) OVER (ORDER BY height) AS before, row_number() OVER (ORDER BY height) AS n FROM blocks) b
		WHERE n > 1 AND prev_hash IS DISTINCT FROM before`).Scan(&broken); err != nil {
		t.Fatalf("check block links: %v", err)
	}
	if broken > 0 {
		t.Errorf("%d stored blocks do not link to the block stored before them", broken)
	}
	return uint64(cursor)
}

// TestReliabilityServeSIGTERM sends SIGTERM to `nearline serve` under
// load: it exits 0, every request it had accepted is answered in full, and
// afterwards connections are refused.
func TestReliabilityServeSIGTERM(t *testing.T) {
	t.Parallel()
	chain := startSim(t, 44, 120)
	dbURL := e2ekit.FreshDatabase(t)
	if out, err := binary.Run(t, 3*time.Minute, indexArgs(dbURL, chain.url(), chain.head)...); err != nil {
		t.Fatalf("index: %v\n%s", err, e2ekit.Tail(out, 30))
	}
	srv := binary.Start(t, "serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort, "--shutdown-timeout", "10s")
	addr := srv.ListenAddr(t, "serving JSON-RPC")
	e2ekit.NewClient(addr).WaitReady(t, 30*time.Second)

	// A batch of 100 block and changes requests: long enough that some are
	// always in flight.
	var batch []map[string]any
	for i := range 100 {
		h := uint64(i) % (chain.head + 1)
		method := "block"
		if i%2 == 1 {
			method = "EXPERIMENTAL_changes_in_block"
		}
		batch = append(batch, map[string]any{"jsonrpc": "2.0", "id": i, "method": method, "params": map[string]any{"block_id": h}})
	}
	body, _ := json.Marshal(batch)

	type outcome struct {
		began, ended time.Time
		err          error
		status       int
		answers      int
	}
	var mu sync.Mutex
	var outcomes []outcome
	stopClients := make(chan struct{})
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			for {
				select {
				case <-stopClients:
					return
				default:
				}
				o := outcome{began: time.Now()}
				resp, err := hc.Post("http://"+addr, "application/json", bytes.NewReader(body))
				if err == nil {
					var raw []byte
					raw, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					o.status = resp.StatusCode
					var answers []json.RawMessage
					if err == nil && o.status == http.StatusServiceUnavailable {
						var env struct {
							Error *struct {
								Name string `json:"name"`
							} `json:"error"`
						}
						if jerr := json.Unmarshal(raw, &env); jerr != nil || env.Error == nil {
							err = fmt.Errorf("503 without an error e2ekit.Envelope: %.200s", raw)
						}
					} else if err == nil {
						if jerr := json.Unmarshal(raw, &answers); jerr != nil {
							err = fmt.Errorf("decode %d-byte answer: %w", len(raw), jerr)
						}
					}
					o.answers = len(answers)
				}
				o.err, o.ended = err, time.Now()
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				if err != nil {
					time.Sleep(20 * time.Millisecond) // pace retries against a closed port
				}
			}
		}()
	}
	count := func(match func(o outcome) bool) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, o := range outcomes {
			if match(o) {
				n++
			}
		}
		return n
	}
	// Every client has had batches answered: the server is busy.
	wait.For(t, 30*time.Second, "12 batches answered", func() bool {
		return count(func(o outcome) bool { return o.err == nil }) >= 12
	})
	signalled := time.Now()
	err, ok := stop(t, srv, syscall.SIGTERM, 20*time.Second)
	exitTook := time.Since(signalled)
	// Clients now meet a closed port.
	wait.For(t, 10*time.Second, "a connection refused after the exit", func() bool {
		return count(func(o outcome) bool { return errors.Is(o.err, syscall.ECONNREFUSED) }) > 0
	})
	close(stopClients)
	wg.Wait()
	if !ok {
		t.Fatal("serve did not exit within 20s of SIGTERM")
	}
	if err != nil {
		t.Fatalf("serve exited with %v after SIGTERM, want 0\n%s", err, e2ekit.Tail(srv.Output(), 20))
	}

	var before, inFlight, refused, drained, resetAfter int
	for _, o := range outcomes {
		switch {
		case o.err == nil && o.status == http.StatusServiceUnavailable && o.ended.After(signalled):
			// Reached the server while it drained: answered with NEAR's
			// error e2ekit.Envelope (a 503) instead of being run or reset.
			drained++
		case o.err == nil:
			if o.status != http.StatusOK || o.answers != len(batch) {
				t.Errorf("answer of HTTP %d with %d of %d answers", o.status, o.answers, len(batch))
			}
			if o.began.Before(signalled) && o.ended.After(signalled) {
				inFlight++
			} else {
				before++
			}
		case errors.Is(o.err, syscall.ECONNREFUSED):
			// Not accepted: the listener was closed.
			refused++
		case o.began.After(signalled) && cutByClosingPort(o.err):
			// Begun after the signal: the server promised it nothing. Its
			// connection met the port closing at the end of the drain
			// (reset while queued, or closed while the client wrote). Any
			// other failure of such a request, and any failure of a
			// request begun before the signal (a dropped request), fails
			// below.
			resetAfter++
		case o.began.After(signalled):
			t.Errorf("request begun %s after SIGTERM failed %s after it neither refused nor reset: %v",
				o.began.Sub(signalled).Round(time.Millisecond), o.ended.Sub(signalled).Round(time.Millisecond), o.err)
		default:
			t.Errorf("request begun %s before SIGTERM failed %s after it: %v (an accepted request was dropped)",
				signalled.Sub(o.began).Round(time.Millisecond), o.ended.Sub(signalled).Round(time.Millisecond), o.err)
		}
	}
	if inFlight == 0 {
		t.Errorf("no request was in flight at SIGTERM (%d before it): the test proved nothing", before)
	}
	if refused == 0 {
		t.Error("no request was refused after SIGTERM")
	}
	if _, err := http.Post("http://"+addr, "application/json", strings.NewReader(`{"method":"status"}`)); err == nil {
		t.Error("serve still accepts connections after exiting")
	}
	t.Logf("serve exited 0 %s after SIGTERM; %d batches answered before, %d in flight at the signal all answered in full, "+
		"%d answered 503 while draining, %d refused after (%d more begun after the signal cut off as the port closed)",
		exitTook.Round(time.Millisecond), before, inFlight, drained, refused, resetAfter)
}

// cutByClosingPort reports whether err is how a connection fails when the
// server's port closes under it: reset while queued (ECONNRESET), or reset
// while the client still wrote its body (EPIPE, or net.ErrClosed once the
// client's transport has closed the connection on seeing the reset).
func cutByClosingPort(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}
