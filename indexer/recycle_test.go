package indexer_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/bufpool"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

// TestDocumentBuffersAreReusedOnlyOnceWritten indexes linked copies of the
// mainnet document with --source neardata twice: reading each document
// into a buffer never reused, and into buffers given back as their blocks
// are written, poisoned as they are given back and read into again by
// later documents. A part of a document read after its buffer went back
// (a status, a row, a repeated chunk) would store poison or another
// block's bytes: the archives must be the same. With a lookahead of two
// blocks, statuses are stored before they are final and revisited after
// every commit, from the documents their progress holds: those are never
// given back (and here every block has such statuses).
func TestDocumentBuffersAreReusedOnlyOnceWritten(t *testing.T) {
	t.Parallel()
	const n = 12
	up := realChainUpstream(t, n)
	for _, c := range []struct {
		name      string
		lookahead int
		givenBack bool
	}{{"final statuses", 0, true}, {"statuses revisited", 2, false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			index := func(buffers *bufpool.Pool) map[string]storetest.Sum {
				docs, err := docsource.NewNeardataFetcher(upstream.Config{Endpoints: []string{up.url}, Timeout: 10 * time.Second,
					Buffers: buffers}, nil)
				require.NoError(t, err)
				src, err := docsource.New(docs, nil, docsource.Config{Genesis: json.RawMessage(`{"genesis_height":0}`),
					TxLookahead: c.lookahead, Waits: upstream.Waits{TxStallWait: time.Millisecond, TxPollInterval: time.Millisecond}}, nil)
				require.NoError(t, err)
				s := storetest.NewStore(t)
				from, to := up.first, up.first+n-1
				ix, err := indexer.New(indexer.Config{From: &from, To: &to, Workers: 4, BatchSize: 3,
					RevisitInterval: time.Nanosecond}, src, s, nil)
				require.NoError(t, err)
				require.NoError(t, ix.Run(context.Background()))
				return storetest.TableSums(t, s.Pool(), "indexer_cursor")
			}
			want := index(bufpool.New(0)) // keeps nothing
			reused := bufpool.NewPoisoned(64 << 20)
			storetest.RequireSameSums(t, want, index(reused))
			back := reused.Get(bufpool.MinSize)
			if !c.givenBack {
				require.Less(t, cap(back), up.docBytes, "a document a kept status holds was given back")
				return
			}
			require.GreaterOrEqual(t, cap(back), up.docBytes, "a document's buffer was given back")
			require.Equal(t, byte(bufpool.PoisonByte), back[:1][0])
		})
	}
}
