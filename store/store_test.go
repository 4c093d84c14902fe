package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// commitRange commits the chain's blocks in [lo, hi] in one batch, filling
// Skipped as the indexer would, and returns what the commit counted.
func commitRange(t *testing.T, s *store.Store, c *storetest.Chain, lo, hi uint64, prev uint64) bundle.CommitStats {
	t.Helper()
	stats, err := s.Commit(context.Background(), c.Batch(lo, hi, prev))
	require.NoError(t, err)
	return stats
}

func count(t *testing.T, s *store.Store, table string) int {
	t.Helper()
	var n int
	require.NoError(t, s.Pool().QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

var allTables = []string{"blocks", "skipped_heights", "block_chunks", "chunks", "transactions", "receipts", "actions",
	"execution_outcomes", "transaction_statuses", "state_changes", "block_changes", "account_history",
	"access_key_history", "contract_data_history", "contract_code_history", "contract_codes", "protocol_configs",
	"epoch_protocol_versions"}

func tableCounts(t *testing.T, s *store.Store) map[string]int {
	out := map[string]int{}
	for _, table := range allTables {
		out[table] = count(t, s, table)
	}
	return out
}

func TestCommitAndReadBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 10, End: 30, Shards: 3,
		Skipped: map[uint64]bool{13: true, 14: true, 22: true},
		Missing: func(h uint64, shard int) bool { return shard == 1 && h%4 == 0 }})

	_, _, err := s.LatestBlock(ctx)
	require.ErrorIs(t, err, store.ErrNotFound)

	commitRange(t, s, c, 10, 20, 9)
	commitRange(t, s, c, 21, 30, 20)

	height, hash, err := s.LatestBlock(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(30), height)
	require.Equal(t, storetest.BlockHash(30), hash)
	height, hash, err = s.EarliestBlock(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(10), height)
	require.Equal(t, storetest.BlockHash(10), hash)

	for _, h := range c.Heights() {
		b, _ := c.Bundle(h)
		view, err := s.BlockView(ctx, near.HeightID(h))
		require.NoError(t, err)
		require.JSONEq(t, string(b.BlockJSON), string(view))
		byHash, err := s.BlockView(ctx, near.HashID(b.Block.Header.Hash))
		require.NoError(t, err)
		require.Equal(t, string(view), string(byHash), "view returned byte for byte")
		stamp, err := s.BlockStamp(ctx, near.HashID(b.Block.Header.Hash))
		require.NoError(t, err)
		require.Equal(t, near.BlockStamp{BlockHeight: h, BlockHash: b.Block.Header.Hash}, stamp)
		for shard, ch := range b.Block.Chunks {
			got, err := s.ChunkHashAt(ctx, h, uint64(shard))
			require.NoError(t, err)
			require.Equal(t, ch.ChunkHash, got)
			_, err = s.ChunkView(ctx, got)
			require.NoError(t, err, "a missing chunk repeats a stored older chunk")
		}
		_, err = s.ChunkHashAt(ctx, h, 3)
		require.ErrorIs(t, err, store.ErrNotFound)
		for _, ch := range b.Chunks {
			got, err := s.ChunkView(ctx, ch.View.Header.ChunkHash)
			require.NoError(t, err)
			require.Equal(t, string(ch.JSON), string(got))
		}
		effects, err := s.BlockEffects(ctx, h)
		require.NoError(t, err)
		require.Equal(t, b.Effects, effects)
		for _, st := range b.TxStatuses {
			got, err := s.TxStatus(ctx, st.TxHash, st.SignerID, true)
			require.NoError(t, err)
			require.JSONEq(t, string(st.JSON), string(got))
		}
		skipped, err := storetest.IsSkippedHeight(ctx, s, h)
		require.NoError(t, err)
		require.False(t, skipped)
		cfg, err := s.ProtocolConfigAt(ctx, h)
		require.NoError(t, err)
		require.JSONEq(t, `{"protocol_version":73,"chain_id":"fake"}`, string(cfg))
	}
	for _, h := range []uint64{13, 14, 22} {
		skipped, err := storetest.IsSkippedHeight(ctx, s, h)
		require.NoError(t, err)
		require.True(t, skipped, "height %d", h)
		_, err = s.BlockView(ctx, near.HeightID(h))
		require.ErrorIs(t, err, store.ErrNotFound)
	}
	skipped, err := storetest.IsSkippedHeight(ctx, s, 31)
	require.NoError(t, err)
	require.False(t, skipped, "a height not yet fetched is not skipped")
	_, err = s.BlockEffects(ctx, 13)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.ChunkView(ctx, storetest.FakeHash("nope"))
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.TxStatus(ctx, storetest.FakeHash("nope"), "alice.near", true)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.BlockView(ctx, near.HashID(storetest.FakeHash("nope")))
	require.ErrorIs(t, err, store.ErrNotFound)

	// Missing chunks were not stored twice: one chunk row per new chunk.
	want := 0
	for _, h := range c.Heights() {
		b, _ := c.Bundle(h)
		want += len(b.Chunks)
	}
	require.Equal(t, want, count(t, s, "chunks"))
	require.Equal(t, 3*len(c.Heights()), count(t, s, "block_chunks"))

	// Execution outcomes carry the height of the block they executed in.
	var outcomeHeight int64
	b12, _ := c.Bundle(12)
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT block_height FROM execution_outcomes WHERE id = $1`,
		storetest.FakeHash("r-"+b12.TxStatuses[0].TxHash)).Scan(&outcomeHeight))
	require.Equal(t, int64(13), outcomeHeight)
}

func TestCommitTwiceNeverDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 40, Skipped: map[uint64]bool{7: true}})
	before := tableCounts(t, s)
	for table, n := range before {
		if table != "skipped_heights" {
			require.NotZero(t, n, table)
		}
	}
	// Re-index a middle range, a single height and everything again.
	commitRange(t, s, c, 5, 12, 4)
	commitRange(t, s, c, 20, 20, 19)
	commitRange(t, s, c, 1, 40, 0)
	require.Equal(t, before, tableCounts(t, s))
	height, _, err := s.LatestBlock(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(40), height, "re-indexing below the cursor never moves it back")
}

func TestStateChangesOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 8})
	b, _ := c.Bundle(8)
	accountTypes := []string{near.ChangeAccountUpdate, near.ChangeAccountDeletion}

	got, err := s.StateChanges(ctx, 8, accountTypes, []string{storetest.Bob, storetest.Alice})
	require.NoError(t, err)
	// Bob first because asked first; alice's two changes in upstream order.
	require.Len(t, got, 3)
	require.Equal(t, storetest.Bob, got[0].Change.AccountID)
	requireStoredChange(t, b.Changes[0], got[1])
	requireStoredChange(t, b.Changes[1], got[2])

	got, err = s.StateChanges(ctx, 8, accountTypes, []string{storetest.Alice})
	require.NoError(t, err)
	require.Len(t, got, 2)

	dataTypes := []string{near.ChangeDataUpdate, near.ChangeDataDeletion}
	got, err = s.StateChanges(ctx, 8, dataTypes, []string{storetest.Contract})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, storetest.DataKey(8), *got[0].Change.KeyBase64)

	got, err = s.StateChanges(ctx, 8, dataTypes, []string{"nobody.near"})
	require.NoError(t, err)
	require.Empty(t, got)
	require.NotNil(t, got)

	// Every change is answerable: the union equals what the block holds.
	all := []string{near.ChangeAccountUpdate, near.ChangeAccountDeletion, near.ChangeAccessKeyUpdate,
		near.ChangeAccessKeyDeletion, near.ChangeDataUpdate, near.ChangeDataDeletion,
		near.ChangeContractCodeUpdate, near.ChangeContractCodeDeletion}
	got, err = s.StateChanges(ctx, 8, all, []string{storetest.Alice, storetest.Bob, storetest.Contract})
	require.NoError(t, err)
	require.Len(t, got, len(b.Changes))

	_, err = s.StateChanges(ctx, 99, all, []string{storetest.Alice})
	require.ErrorIs(t, err, store.ErrNotFound)
}

// requireStoredChange checks that a change read back has the typed fields
// of the one committed and carries, in Raw, the JSON it was committed with.
func requireStoredChange(t *testing.T, want bundle.StateChange, got near.StateChangeWithCauseView) {
	t.Helper()
	wantJSON := want.JSON
	if len(wantJSON) == 0 {
		var err error
		wantJSON, err = json.Marshal(want.View)
		require.NoError(t, err)
	}
	require.JSONEq(t, string(wantJSON), string(got.Raw))
	got.Raw = nil
	require.Equal(t, want.View, got)
}

func TestChainConfigReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	_, err := s.GenesisConfig(ctx)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.PutGenesisConfig(ctx, json.RawMessage(`{"chain_id":"fake","genesis_height":1}`)))
	cfg, err := s.GenesisConfig(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"chain_id":"fake","genesis_height":1}`, string(cfg))

	_, err = s.HistoryStart(ctx)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.SetHistoryStart(ctx, 5, "snapshot"))
	require.NoError(t, s.SetHistoryStart(ctx, 9, "snapshot"))
	start, err := s.HistoryStart(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(5), start, "the first recorded start wins")

	_, err = s.ProtocolConfigAt(ctx, 1)
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	st, err := s.Status(ctx)
	require.NoError(t, err)
	require.False(t, st.HasCursor)
	c := storetest.NewChain(storetest.ChainConfig{Start: 5, End: 20, Skipped: map[uint64]bool{8: true, 9: true}})
	commitRange(t, s, c, 5, 20, 4)
	st, err = s.Status(ctx)
	require.NoError(t, err)
	require.True(t, st.HasCursor)
	require.Equal(t, bundle.Cursor{Height: 20, Hash: storetest.BlockHash(20)}, st.Cursor)
	require.Equal(t, uint64(5), st.EarliestHeight)
	require.Equal(t, int64(14), st.Blocks)
	require.Equal(t, int64(2), st.SkippedHeights)
	require.Zero(t, st.Gaps)
}

// TestReceiptReadsTheChunkItCameIn: a receipt is answered from the view of
// the first indexed chunk that carries it, byte for byte.
func TestReceiptReadsTheChunkItCameIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 8})
	found := 0
	for h := uint64(1); h <= 8; h++ {
		b, ok := c.Bundle(h)
		if !ok {
			continue
		}
		for _, ch := range b.Chunks {
			for _, r := range ch.View.Receipts {
				want, err := json.Marshal(r)
				require.NoError(t, err)
				got, err := s.Receipt(ctx, r.ReceiptID)
				require.NoError(t, err)
				require.JSONEq(t, string(want), string(got))
				found++
			}
		}
	}
	require.Positive(t, found, "the chain has receipts in its chunks")
	_, err := s.Receipt(ctx, storetest.FakeHash("no-such-receipt"))
	require.ErrorIs(t, err, store.ErrNotFound)
}

// TestReceiptTxNamesTheTransactionWhoseStatusListsIt: a receipt's
// transaction is the one whose stored status lists the receipt's outcome.
func TestReceiptTxNamesTheTransactionWhoseStatusListsIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, c := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 8})
	b, ok := c.Bundle(8)
	require.True(t, ok)
	require.NotEmpty(t, b.TxStatuses)
	for _, st := range b.TxStatuses {
		txHash, signer, err := s.ReceiptTx(ctx, storetest.FakeHash("r-"+st.TxHash))
		require.NoError(t, err)
		require.Equal(t, st.TxHash, txHash)
		require.Equal(t, st.SignerID, signer)
	}
	_, _, err := s.ReceiptTx(ctx, b.TxStatuses[0].TxHash)
	require.ErrorIs(t, err, store.ErrNotFound, "a transaction's own outcome is not a receipt's")
}

// TestWriteTakesOnlyItsOwnBatches: a batch another sink made (no rows of
// this store's Prepare) is refused and writes nothing; the same bundles
// prepared by the store are written.
func TestWriteTakesOnlyItsOwnBatches(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := storetest.NewStore(t)
	bundles := storetest.NewChain(storetest.ChainConfig{Start: 10, End: 12, Shards: 1}).Batch(10, 12, 9)

	_, err := s.Write(ctx, &bundle.Batch{Bundles: bundles})
	require.ErrorContains(t, err, "not made by Store.Prepare")
	require.Zero(t, count(t, s, "blocks"))

	prepared, err := s.Prepare(bundles)
	require.NoError(t, err)
	stats, err := s.Write(ctx, prepared)
	require.NoError(t, err)
	require.Equal(t, 3, stats.Blocks)
	require.Equal(t, 3, count(t, s, "blocks"))
}
