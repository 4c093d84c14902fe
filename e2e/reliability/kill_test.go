//go:build e2e

package reliability

import (
	"context"
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/store/storetest"
)

// TestReliabilitySIGKILLKeepsEveryBlockOnce kills `nearline index` with
// SIGKILL again and again, half of the time while its commit transaction
// has written rows, restarts it each time, and checks that once it reaches
// --to every table holds exactly what an uninterrupted run of the same
// chain wrote.
func TestReliabilitySIGKILLKeepsEveryBlockOnce(t *testing.T) {
	t.Parallel()
	heights, kills := 2000, 20
	if longReliability() {
		heights, kills = 5000, 60
	}
	chain := startSim(t, 21, heights)
	want := reference(t, chain)

	dbURL := e2ekit.FreshDatabase(t)
	dbName := databaseName(t, dbURL)
	admin := adminConn(t)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("kill schedule seed %d", seed)

	step := chain.head / uint64(kills+5)
	began := time.Now()
	done, midCommit, lastCursor, advanced := 0, 0, uint64(0), 0
	for done < kills {
		batch := 1 + rng.IntN(16)
		p := binary.Start(t, indexArgs(dbURL, chain.url(), chain.head,
			"--batch-size", strconv.Itoa(batch), "--workers", "4")...)
		// Spread the kills over the chain: let the cursor move on by about
		// its share first (the first run: not at all, to kill during
		// start-up and the first commits).
		if done > 0 {
			// Never aim past head-step: a schedule whose random advances
			// add up beyond the chain would wait for a cursor that --to
			// never lets the indexer reach.
			target := min(lastCursor+uint64(rng.IntN(int(2*step))), max(chain.head-step, lastCursor))
			e2ekit.WaitCursor(t, dbURL, target, time.Minute)
		}
		if done%2 == 0 {
			// Wait for a commit that has written rows, then kill it a
			// random moment later (often still inside it).
			waitWritingTx(t, admin, dbName, p, 20*time.Second)
			time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
		} else {
			// A random moment: the schedule, not a wait for something.
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		}
		if err, ok := p.Exited(); ok {
			if err != nil {
				t.Fatalf("index exited on its own before kill %d: %v\n%s", done+1, err, e2ekit.Tail(p.Output(), 30))
			}
			t.Fatalf("index reached --to %d after only %d kills: make the chain longer", chain.head, done)
		}
		writing := writingTx(t, admin, dbName)
		if _, ok := stop(t, p, syscall.SIGKILL, 10*time.Second); !ok {
			t.Fatal("index did not die within 10s of SIGKILL")
		}
		done++
		if writing {
			midCommit++
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		h, _ := e2ekit.CursorHeight(ctx, dbURL)
		cancel()
		if h < lastCursor {
			t.Fatalf("cursor moved backwards after kill %d: %d < %d", done, h, lastCursor)
		}
		if h > lastCursor {
			advanced++
		}
		lastCursor = h
	}
	killedAt := lastCursor
	out, err := binary.Run(t, 5*time.Minute, indexArgs(dbURL, chain.url(), chain.head)...)
	if err != nil {
		t.Fatalf("last restart did not reach --to: %v\n%s", err, e2ekit.Tail(out, 40))
	}
	elapsed := time.Since(began)
	got := tableSums(t, dbURL)
	storetest.RequireSameSums(t, want, got)
	if midCommit == 0 {
		t.Errorf("none of the %d kills landed while a commit had written rows", kills)
	}
	if advanced < kills/4 {
		t.Errorf("the cursor advanced between only %d of %d kills", advanced, kills)
	}
	t.Logf("%d SIGKILLs (%d while a commit transaction had written rows; the cursor advanced between %d of them, to %d); "+
		"the last restart reached --to %d; %s in all; %d tables equal to the uninterrupted run (blocks md5 %s)",
		kills, midCommit, advanced, killedAt, chain.head, elapsed.Round(time.Millisecond), len(got), got["blocks"].MD5)
}

// writingTx reports whether a backend of the database has an open
// transaction that has written something (holds a transaction id).
func writingTx(t *testing.T, admin *pgx.Conn, dbName string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = $1 AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()`, dbName).Scan(&n); err != nil {
		t.Fatalf("read pg_stat_activity: %v", err)
	}
	return n > 0
}

// waitWritingTx polls until a writing transaction is open in the database,
// the process exits, or the timeout passes.
func waitWritingTx(t *testing.T, admin *pgx.Conn, dbName string, p *e2ekit.Process, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if writingTx(t, admin, dbName) {
			return
		}
		if _, ok := p.Exited(); ok {
			return
		}
		time.Sleep(3 * time.Millisecond) // finer than wait.Interval: commits are short
	}
	t.Logf("no writing transaction seen within %s", timeout)
}
