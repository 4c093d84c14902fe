//go:build e2e

package reliability

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/e2ekit"
)

// TestReliabilityForkStopsTheIndexer indexes a chain, then replaces the
// upstream on the same address with one whose chain forks, and checks that
// `nearline index` stops with an error naming the height and both hashes
// and writes nothing from the fork on.
func TestReliabilityForkStopsTheIndexer(t *testing.T) {
	t.Parallel()
	const seed, maxHeight, indexedTo = 55, 300, 200
	for _, tc := range []struct {
		name   string
		forkAt uint64
	}{
		{"fork above the indexed height", 230},
		{"fork below the indexed height", 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			original := startSim(t, seed, maxHeight)
			addr := original.addr
			dbURL := e2ekit.FreshDatabase(t)
			if out, err := binary.Run(t, 3*time.Minute, indexArgs(dbURL, original.url(), indexedTo)...); err != nil {
				t.Fatalf("index to %d: %v\n%s", indexedTo, err, e2ekit.Tail(out, 20))
			}
			// The simulator forks at a height only if it produces a block
			// there: take the first block from the wanted height on.
			forkAt, _ := firstBlockFrom(t, original.c, tc.forkAt)
			// The last block the indexer can link: the one before the fork,
			// or the last indexed one when the fork is below it.
			lastHeight, lastHash := lastBlockUpTo(t, original.c, min(forkAt-1, indexedTo+50))
			if forkAt <= indexedTo {
				lastHeight, lastHash = lastBlockUpTo(t, original.c, indexedTo)
			}
			originalHashes := map[uint64]string{}
			for h := lastHeight - 40; h <= lastHeight; h++ {
				if b, ok := blockHeader(t, original.c, h); ok {
					originalHashes[h] = b.Hash
				}
			}
			if _, ok := stop(t, original.proc, syscall.SIGTERM, 20*time.Second); !ok {
				t.Fatal("simulator did not stop")
			}
			forked := startSimAt(t, addr, seed, maxHeight, "--fork-at", strconv.FormatUint(forkAt, 10))
			breakHeight, prevHash := firstBlockFrom(t, forked.c, lastHeight+1)
			if prevHash == lastHash {
				t.Fatalf("block %d of the forked chain links to the original block %d: no fork", breakHeight, lastHeight)
			}

			out, err := binary.Run(t, 3*time.Minute, indexArgs(dbURL, forked.url(), forked.head)...)
			if err == nil {
				t.Fatalf("index over the fork exited 0:\n%s", e2ekit.Tail(out, 20))
			}
			for _, want := range []string{fmt.Sprintf("height %d", breakHeight), prevHash, lastHash} {
				if !strings.Contains(out, want) {
					t.Errorf("the error does not name %q:\n%s", want, e2ekit.Tail(out, 10))
				}
			}
			if cursor := requireConsistent(t, dbURL); cursor != lastHeight {
				t.Errorf("cursor at %d after the fork, want the last linked block %d", cursor, lastHeight)
			}
			requireNothingFrom(t, dbURL, lastHeight+1)
			requireStoredHashes(t, dbURL, originalHashes, lastHeight)
			t.Logf("fork at %d: index stopped at height %d naming prev_hash %s and the stored %s at %d; nothing stored above %d",
				forkAt, breakHeight, prevHash, lastHash, lastHeight, lastHeight)
		})
	}
}

type header struct {
	Height   uint64 `json:"height"`
	Hash     string `json:"hash"`
	PrevHash string `json:"prev_hash"`
}

// blockHeader returns the header of the block at height, ok false when
// the chain skipped it.
func blockHeader(t *testing.T, c *e2ekit.Client, height uint64) (header, bool) {
	t.Helper()
	env, err := c.Call("block", map[string]any{"block_id": height})
	if err != nil {
		t.Fatalf("block %d: %v", height, err)
	}
	if env.Result == nil {
		return header{}, false
	}
	var b struct {
		Header header `json:"header"`
	}
	if err := json.Unmarshal(env.Result, &b); err != nil {
		t.Fatalf("decode block %d: %v", height, err)
	}
	return b.Header, true
}

// firstBlockFrom returns the first block at or above height.
func firstBlockFrom(t *testing.T, c *e2ekit.Client, height uint64) (uint64, string) {
	t.Helper()
	for h := height; h < height+50; h++ {
		if b, ok := blockHeader(t, c, h); ok {
			return b.Height, b.PrevHash
		}
	}
	t.Fatalf("no block in 50 heights from %d", height)
	return 0, ""
}

// lastBlockUpTo returns the last block at or below height.
func lastBlockUpTo(t *testing.T, c *e2ekit.Client, height uint64) (uint64, string) {
	t.Helper()
	for h := height; h+50 > height; h-- {
		if b, ok := blockHeader(t, c, h); ok {
			return b.Height, b.Hash
		}
	}
	t.Fatalf("no block in 50 heights up to %d", height)
	return 0, ""
}

// requireNothingFrom checks that no table holds a row at or above height.
func requireNothingFrom(t *testing.T, dbURL string, height uint64) {
	t.Helper()
	ctx, conn, done := connect(t, dbURL, time.Minute)
	defer done()
	for table, col := range blockTables(t, conn) {
		var n int64
		q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE %s >= $1`, pgx.Identifier{table}.Sanitize(), pgx.Identifier{col}.Sanitize())
		if err := conn.QueryRow(ctx, q, int64(height)).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		if n > 0 {
			t.Errorf("%s has %d rows from height %d on, past the fork", table, n, height)
		}
	}
}

// requireStoredHashes checks that every stored block up to height is the
// original chain's.
func requireStoredHashes(t *testing.T, dbURL string, original map[uint64]string, height uint64) {
	t.Helper()
	ctx, conn, done := connect(t, dbURL, time.Minute)
	defer done()
	rows, err := conn.Query(ctx, `SELECT height, hash FROM blocks WHERE height >= $1 - 40 ORDER BY height`, int64(height))
	if err != nil {
		t.Fatalf("read blocks: %v", err)
	}
	type stored struct {
		Height int64
		Hash   string
	}
	blocks, err := pgx.CollectRows(rows, pgx.RowToStructByPos[stored])
	if err != nil {
		t.Fatalf("read blocks: %v", err)
	}
	for _, b := range blocks {
		if want := original[uint64(b.Height)]; want != b.Hash {
			t.Errorf("stored block %d is %s, the original chain's is %q", b.Height, b.Hash, want)
		}
	}
}
