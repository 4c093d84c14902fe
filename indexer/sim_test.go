package indexer_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

func TestIndexSimulatedChainMatchesSimulator(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Seed: 11, Shards: 4, SkipRate: 0.08, MissingChunkRate: 0.08, TxsPerBlock: 5, EpochLength: 40, ViewStateLimit: -1}
	const maxHeight = 150
	cfg.MaxHeight = maxHeight
	chain := simtest.New(t, cfg)
	s := storetest.NewStore(t)
	genesis, accounts := simtest.GenesisFile(t, chain.Node)
	simtest.IndexEndpoints(t, s, maxHeight-5, genesis, chain.URL)
	simtest.Check(t, chain.Node, s, 0, maxHeight-5)
	simtest.CheckState(t, chain.Node, s, accounts, []uint64{0, 1, 17, 40, 41, 77, 120, maxHeight - 5})
	start, err := s.HistoryStart(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(0), start)
}

func TestIndexSimulatedChainThroughFaultyUpstream(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Seed: 5, Shards: 3, SkipRate: 0.1, MissingChunkRate: 0.1, TxsPerBlock: 3, ViewStateLimit: -1}
	const maxHeight = 60
	cfg.MaxHeight = maxHeight
	chain := simtest.New(t, cfg)
	faulty := cfg
	faulty.Faults = sim.FaultConfig{Seed: 3, Fail5xx: 0.2, FailInternal: 0.1, FailMalformed: 0.1,
		Stall: 0.05, StallDuration: 5 * time.Second}
	bad := simtest.New(t, faulty)
	s := storetest.NewStore(t)
	simtest.IndexEndpoints(t, s, maxHeight, nil, bad.URL, chain.URL)
	simtest.Check(t, chain.Node, s, 0, maxHeight)
}

// snapshotAtStart simulates cfg's chain and, into a fresh store, snapshots
// its genesis accounts and extra (accounts it does not have) at height, as
// `nearline snapshot` does; it returns the genesis accounts.
func snapshotAtStart(t *testing.T, cfg sim.Config, height uint64, extra ...string) (*simtest.Chain, *store.Store, *upstream.Client, []string) {
	t.Helper()
	chain := simtest.New(t, cfg)
	s := storetest.NewStore(t)
	client := chain.Client(t)
	_, accounts := simtest.GenesisFile(t, chain.Node)
	require.NoError(t, basestate.Snapshot(context.Background(), client, s, height, append(slices.Clone(accounts), extra...), nil))
	return chain, s, client, accounts
}

func TestSnapshotAccountsStartHistory(t *testing.T) {
	t.Parallel()
	chain, s, client, accounts := snapshotAtStart(t, sim.Config{Seed: 2, Shards: 2, TxsPerBlock: 4, ViewStateLimit: -1, MaxHeight: 60},
		30, "nobody-here.near")
	ctx := context.Background()
	start, err := s.HistoryStart(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(30), start)
	from, to := uint64(30), uint64(60)
	src := simtest.NodeSource(t, client, rpcsource.Config{Waits: upstream.Waits{TxStallWait: 200 * time.Millisecond}})
	ix, err := indexer.New(indexer.Config{From: &from, To: &to}, src, s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))
	simtest.CheckState(t, chain.Node, s, accounts, []uint64{30, 31, 45, 60})
	_, err = s.AccountAt(ctx, accounts[0], 29)
	require.ErrorIs(t, err, store.ErrNotFound, "nothing is known before the snapshot")
}

func TestGarbageCollectedUpstreamNeedsArchivalNode(t *testing.T) {
	t.Parallel()
	chain := simtest.New(t, sim.Config{Seed: 4, Shards: 2, GCWindow: 20, MaxHeight: 80})
	s := storetest.NewStore(t)
	client, err := upstream.NewClient(upstream.Config{Endpoints: []string{chain.URL}, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}, nil)
	require.NoError(t, err)
	from, to := uint64(5), uint64(30)
	ix, err := indexer.New(indexer.Config{From: &from, To: &to}, simtest.NodeSource(t, client, rpcsource.Config{}), s, nil)
	require.NoError(t, err)
	err = ix.Run(context.Background())
	require.ErrorIs(t, err, upstream.ErrNeedsArchival)
	require.ErrorContains(t, err, "needs an archival node")
	_, _, err = s.LatestBlock(context.Background())
	require.ErrorIs(t, err, store.ErrNotFound, "nothing was written")
}

func TestForkedUpstreamStopsWithContinuityError(t *testing.T) {
	t.Parallel()
	chain := simtest.New(t, sim.Config{Seed: 8, Shards: 2, ForkAt: 25, TxsPerBlock: 2, MaxHeight: 40})
	s := storetest.NewStore(t)
	client := chain.Client(t)
	to := uint64(40)
	ix, err := indexer.New(indexer.Config{To: &to, BatchSize: 10}, simtest.NodeSource(t, client, rpcsource.Config{}), s, nil)
	require.NoError(t, err)
	err = ix.Run(context.Background())
	require.ErrorIs(t, err, indexer.ErrContinuity)
	require.ErrorContains(t, err, "height 25")
	height, hash, err := s.LatestBlock(context.Background())
	require.NoError(t, err)
	require.Less(t, height, uint64(25))
	require.ErrorContains(t, ix.Run(context.Background()), hash, "a restart stops at the same place, naming the committed hash")
	var above int
	require.NoError(t, s.Pool().QueryRow(context.Background(), `SELECT count(*) FROM blocks WHERE height >= 25`).Scan(&above))
	require.Zero(t, above)
}

func TestNonFinalTxStatusesAreRevisited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sim.Config{Seed: 21, Shards: 2, TxsPerBlock: 6, ViewStateLimit: -1, MaxHeight: 80,
		YieldTimeout: 4} // yields end within a few blocks, as the other receipts do
	chain := simtest.Start(t, cfg)
	node := chain.Node
	require.NoError(t, node.ProduceTo(ctx, 40))
	s := storetest.NewStore(t)
	client := chain.Client(t)
	src := simtest.NodeSource(t, client, rpcsource.Config{Waits: upstream.Waits{TxStallWait: 50 * time.Millisecond, TxPollInterval: 10 * time.Millisecond}})
	run := func(to uint64) {
		ix, err := indexer.New(indexer.Config{To: &to, RevisitInterval: time.Nanosecond, BatchSize: 5}, src, s, nil)
		require.NoError(t, err)
		require.NoError(t, ix.Run(ctx))
	}
	run(40)
	pending, err := s.PendingTxStatuses(ctx, 40, 1000)
	require.NoError(t, err)
	require.NotEmpty(t, pending, "at the simulator's head some transactions are still running")

	require.NoError(t, node.ProduceTo(ctx, 80))
	run(80)
	simtest.RequireRevisited(t, node, s, pending, 40)
	var outcomes, wantOutcomes int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM execution_outcomes WHERE tx_block_height <= 40`).Scan(&outcomes))
	rows, err := s.Pool().Query(ctx, `SELECT tx_hash, signer_id, block_height FROM transaction_statuses WHERE block_height <= 40`)
	require.NoError(t, err)
	refs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[bundle.TxRef])
	require.NoError(t, err)
	for _, ref := range refs {
		raw, err := s.TxStatus(ctx, ref.TxHash, ref.SignerID, true)
		require.NoError(t, err)
		var st struct {
			ReceiptsOutcome []json.RawMessage `json:"receipts_outcome"`
		}
		require.NoError(t, json.Unmarshal(raw, &st))
		wantOutcomes += len(st.ReceiptsOutcome) + 1
	}
	require.Equal(t, wantOutcomes, outcomes, "outcomes replaced, not duplicated")
}

func TestIndexFromMidChainStoresRepeatedOlderChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	chain := simtest.New(t, sim.Config{Seed: 13, Shards: 3, MissingChunkRate: 0.5, TxsPerBlock: 2, MaxHeight: 60})
	s := storetest.NewStore(t)
	client := chain.Client(t)
	from, to := uint64(30), uint64(60)
	ix, err := indexer.New(indexer.Config{From: &from, To: &to, BatchSize: 8},
		simtest.NodeSource(t, client, rpcsource.Config{Waits: upstream.Waits{TxStallWait: 50 * time.Millisecond}}), s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))
	older := 0
	for h := from; h <= to; h++ {
		raw, err := chain.Node.Block(ctx, simtest.BlockRef(t, h))
		if err != nil {
			continue
		}
		var block near.BlockView
		require.NoError(t, json.Unmarshal(raw, &block))
		for _, c := range block.Chunks {
			if c.HeightIncluded < from {
				older++
			}
			req, perr := near.ParseChunkRequest(simtest.Params(t, map[string]any{"block_id": h, "shard_id": c.ShardID}))
			require.NoError(t, perr)
			want, err := chain.Node.Chunk(ctx, req)
			require.NoError(t, err)
			hash, err := s.ChunkHashAt(ctx, h, c.ShardID)
			require.NoError(t, err)
			got, err := s.ChunkView(ctx, hash)
			require.NoError(t, err, "chunk of shard %d at %d (included at %d)", c.ShardID, h, c.HeightIncluded)
			require.JSONEq(t, string(want), string(got))
		}
	}
	require.Positive(t, older, "some blocks repeat a chunk from before --from")
	// Re-indexing the range keeps one row per chunk.
	ix, err = indexer.New(indexer.Config{From: &from, To: &to, BatchSize: 5},
		simtest.NodeSource(t, client, rpcsource.Config{Waits: upstream.Waits{TxStallWait: 50 * time.Millisecond}}), s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))
	var dups int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) - count(DISTINCT chunk_hash) FROM chunks`).Scan(&dups))
	require.Zero(t, dups)
}

// TestSnapshotOfANewerNearcoreKeepsItsMembers snapshots accounts from an
// upstream answering like a newer nearcore (sim.Config.NearcoreNext): the
// stored accounts and keys encode back to exactly what it served.
func TestSnapshotOfANewerNearcoreKeepsItsMembers(t *testing.T) {
	t.Parallel()
	const height = 30
	_, s, client, accounts := snapshotAtStart(t, sim.Config{Seed: 2, Shards: 2, TxsPerBlock: 4, ViewStateLimit: -1, NearcoreNext: true, MaxHeight: 40},
		height)
	ctx := context.Background()
	for _, id := range accounts {
		served := func(requestType string) (json.RawMessage, near.BlockStamp) {
			raw, err := client.CallRaw(ctx, "query", map[string]any{"request_type": requestType, "block_id": height, "account_id": id})
			require.NoError(t, err)
			var stamp near.BlockStamp
			require.NoError(t, json.Unmarshal(raw, &stamp))
			return raw, stamp
		}
		want, stamp := served(near.QueryViewAccount)
		acc, err := s.AccountAt(ctx, id, height)
		require.NoError(t, err)
		require.Contains(t, string(want), `"next_account_field"`)
		require.Equal(t, string(want), simtest.JSONOf(t, near.AccountView{Account: acc, BlockStamp: stamp}), "account %s", id)
		want, stamp = served(near.QueryViewAccessKeyList)
		keys, err := s.AccessKeysAt(ctx, id, height)
		require.NoError(t, err)
		require.Equal(t, string(want), simtest.JSONOf(t, near.AccessKeyListView{Keys: keys, BlockStamp: stamp}), "keys of %s", id)
	}
}
