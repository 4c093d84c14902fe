package docsource_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bench/realchain"
	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/docsource/neardatatest"
	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/internal/packed"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// mainnetBundles returns the bundles the document source builds of the
// first n of nine linked copies of the mainnet document (a copy's statuses
// complete within five copies), each with transactions.
func mainnetBundles(tb testing.TB, n int) []bundle.Bundle {
	tb.Helper()
	ctx := context.Background()
	tpl, err := realchain.New(fixture.Read(tb, "real/neardata/mainnet-151768255.json"))
	require.NoError(tb, err)
	docs, err := tpl.Copies(9)
	require.NoError(tb, err)
	first := tpl.Height()
	srv := neardatatest.New(first, docs)
	tb.Cleanup(srv.Close)
	fetcher, err := docsource.NewNeardataFetcher(fastHTTP(srv.URL()), nil)
	require.NoError(tb, err)
	src, err := docsource.New(fetcher, nil, docsource.Config{Genesis: json.RawMessage(`{"genesis_height":0}`), Waits: replayWaits}, nil)
	require.NoError(tb, err)
	src.Prepare(first)
	bundles := make([]bundle.Bundle, 0, n)
	for h := first; h < first+uint64(n); h++ {
		b, err := src.Bundle(ctx, h)
		require.NoError(tb, err)
		require.NotEmpty(tb, b.TxStatuses)
		bundles = append(bundles, *b)
	}
	return bundles
}

// TestMainnetStatusesAreServedByteForByteFromTheirParts: linked copies of
// the mainnet document, whose receipts run in the next copies, committed
// in two batches. Each status is stored without its transaction (kept in
// its chunk); tx and EXPERIMENTAL_tx_status answer the statuses the source
// built, byte for byte, and the archive is the same as one written in one
// batch.
func TestMainnetStatusesAreServedByteForByteFromTheirParts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bundles := mainnetBundles(t, 4)
	st := storetest.NewStore(t)
	_, err := st.Commit(ctx, bundles[:2])
	require.NoError(t, err)
	_, err = st.Commit(ctx, bundles[2:])
	require.NoError(t, err)

	for _, b := range bundles {
		compact, asServed, err := storetest.StatusForms(ctx, st.Pool(), b.Height())
		require.NoError(t, err)
		require.Equal(t, len(b.TxStatuses), compact, "block %d: %d statuses kept as served", b.Height(), asServed)
		for _, s := range b.TxStatuses {
			got, err := st.TxStatus(ctx, s.TxHash, s.SignerID, true)
			require.NoError(t, err)
			require.Equal(t, string(s.JSON), string(got), "EXPERIMENTAL_tx_status %s", s.TxHash)
			want, err := jsonobject.Filter(s.JSON, func(key string) bool { return key != "receipts" })
			require.NoError(t, err)
			got, err = st.TxStatus(ctx, s.TxHash, s.SignerID, false)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "tx %s", s.TxHash)
		}
	}
	// What is stored does not depend on where batches end.
	one := storetest.NewStore(t)
	_, err = one.Commit(ctx, bundles)
	require.NoError(t, err)
	storetest.RequireSameSums(t, storetest.TableSums(t, one.Pool(), "indexer_cursor"), storetest.TableSums(t, st.Pool(), "indexer_cursor"))
}

// BenchmarkTxStatusOfTheRealChain reads EXPERIMENTAL_tx_status and tx of
// the mainnet copies' transactions, stored compact (the transaction in its
// chunk) and, in the same run, as served (as layout 3 stored them).
func BenchmarkTxStatusOfTheRealChain(b *testing.B) {
	ctx := context.Background()
	bundles := mainnetBundles(b, 4)
	compact := storetest.NewStore(b)
	_, err := compact.Commit(ctx, bundles)
	require.NoError(b, err)
	asServed := storetest.NewStore(b)
	_, err = asServed.Commit(ctx, bundles)
	require.NoError(b, err)
	codec, err := packed.NewCodec()
	require.NoError(b, err)
	for _, bd := range bundles {
		statuses := make([]json.RawMessage, len(bd.TxStatuses))
		for i, s := range bd.TxStatuses {
			statuses[i] = s.JSON
		}
		_, err := asServed.Pool().Exec(ctx, `UPDATE block_tx_statuses SET statuses = $2 WHERE block_height = $1`,
			int64(bd.Height()), codec.Pack(statuses))
		require.NoError(b, err)
	}
	txs := bundles[1].TxStatuses
	for _, form := range []struct {
		name  string
		store *store.Store
	}{{"compact", compact}, {"as-served", asServed}} {
		for _, withReceipts := range []bool{true, false} {
			method := map[bool]string{true: "EXPERIMENTAL_tx_status", false: "tx"}[withReceipts]
			b.Run(form.name+"/"+method, func(b *testing.B) {
				k := 0
				for b.Loop() {
					s := txs[k%len(txs)]
					k++
					if _, err := form.store.TxStatus(ctx, s.TxHash, s.SignerID, withReceipts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPrepareRealChain builds the rows of four linked copies of the
// mainnet document, explorer tables on, as the indexer's prepare stage
// does for a batch (store.Prepare: the rows, the chunks' and statuses'
// packed documents, the events): cpu-ms/block is the process's CPU per
// block, garbage collection included, without the database's.
func BenchmarkPrepareRealChain(b *testing.B) {
	bundles := mainnetBundles(b, 4)
	st := storetest.NewStore(b)
	b.ReportAllocs()
	start := docsource.CPUTime(b)
	for b.Loop() {
		if _, err := st.Prepare(bundles); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(docsource.CPUTime(b)-start)/float64(b.N*len(bundles))/1e6, "cpu-ms/block")
}
