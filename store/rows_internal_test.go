package store

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bench/realchain"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/docsource/neardatatest"
	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/internal/packed"
	"github.com/nearline/nearline/upstream"
)

// TestRowsOfTheMainnetDocument builds the rows of two linked copies of the
// mainnet document without a database, as Prepare does, and checks them
// against their bundles: a transactions and a receipts row per chunk
// member, in order; a chunk's action arrays one element per action; every
// status's outcomes naming it by its place; every account column's name
// among those the write interns; and every table's columns named once.
func TestRowsOfTheMainnetDocument(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tpl, err := realchain.New(fixture.Read(t, "real/neardata/mainnet-151768255.json"))
	require.NoError(t, err)
	docs, err := tpl.Copies(2 + tpl.Stats().MaxDepth + 2)
	require.NoError(t, err)
	srv := neardatatest.New(tpl.Height(), docs)
	t.Cleanup(srv.Close)
	fetcher, err := docsource.NewNeardataFetcher(upstream.Config{Endpoints: []string{srv.URL()}, Timeout: 10 * time.Second}, nil)
	require.NoError(t, err)
	src, err := docsource.New(fetcher, nil, docsource.Config{Genesis: json.RawMessage(`{"genesis_height":0}`),
		Waits: upstream.Waits{TxStallWait: time.Millisecond, TxPollInterval: time.Millisecond}}, nil)
	require.NoError(t, err)
	src.Prepare(tpl.Height())
	codec, err := packed.NewCodec()
	require.NoError(t, err)
	r := newRowSet(codec)
	r.events = true
	var wantTxs, wantReceipts, signers []string
	chunks := 0
	for h := tpl.Height(); h < tpl.Height()+2; h++ {
		b, err := src.Bundle(ctx, h)
		require.NoError(t, err)
		require.NoError(t, r.addBundle(b))
		r.addActivity(b)
		for _, i := range byShard(b.Chunks) {
			chunks++
			for _, tx := range b.Chunks[i].View.Transactions {
				wantTxs, signers = append(wantTxs, tx.Hash), append(signers, tx.SignerID)
			}
			for _, rc := range b.Chunks[i].View.Receipts {
				wantReceipts = append(wantReceipts, rc.ReceiptID)
			}
		}
	}
	r.packStatuses()
	r.finishExplorer()

	// Transactions and receipts, in the chunks' shard order.
	require.NotEmpty(t, wantTxs)
	gotTxs := make([]string, len(r.transactions))
	for i, row := range r.transactions {
		gotTxs[i] = row.hash
	}
	gotReceipts := make([]string, len(r.receipts))
	for i, row := range r.receipts {
		gotReceipts[i] = row.id
	}
	require.Equal(t, wantTxs, gotTxs)
	require.Equal(t, wantReceipts, gotReceipts)
	require.Len(t, r.chunks, chunks)
	for _, c := range r.chunks {
		a := c.acts
		for _, n := range []int{len(a.parentKinds), len(a.parentIndexes), len(a.indexes), len(a.methods), len(a.gas),
			len(a.deposits), len(a.publicKeys), len(a.beneficiaries), len(a.codeHashes), len(a.details),
			len(a.delegateParents), len(a.bys), len(a.senders)} {
			require.Equal(t, len(a.kinds), n, "chunk %s: an element per action in every array", c.hash)
		}
	}
	// Every outcome names a status of its transaction's block by place.
	statuses := map[[2]int64]bool{}
	for _, s := range r.txStatuses {
		statuses[[2]int64{s.height, int64(s.index)}] = true
	}
	require.NotEmpty(t, r.outcomes)
	for _, o := range r.outcomes {
		require.True(t, statuses[[2]int64{o.txHeight, int64(o.txIndex)}], "outcome %s names status %d of block %d", o.id, o.txIndex, o.txHeight)
	}
	require.NotEmpty(t, r.ex.ftEvents, "the document's token transfers")
	require.NotEmpty(t, r.accounts)

	// The accounts the write interns hold every account column's name.
	names := accountNames(slices.Concat(tables, explorerTables), r)
	require.True(t, slices.IsSorted(names))
	for _, want := range slices.Concat(signers, []string{r.accounts[0].account, r.ex.ftEvents[0].account, r.ex.ftEvents[0].key.contract}) {
		_, found := slices.BinarySearch(names, want)
		require.True(t, found, "account %s is interned", want)
	}
	for _, tb := range slices.Concat(tables, explorerTables) {
		spec := tb.spec()
		seen := map[string]bool{}
		for _, c := range spec.columns {
			require.False(t, seen[c], "%s.%s named twice", spec.name, c)
			seen[c] = true
		}
	}
}
