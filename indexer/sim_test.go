package indexer_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

func params(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func blockRef(t *testing.T, h uint64) near.BlockReference {
	ref, perr := near.ParseBlockReference(params(t, map[string]any{"block_id": h}))
	require.Nil(t, perr)
	return ref
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// newSim produces a chain up to maxHeight and serves it (with faults).
func newSim(t *testing.T, cfg sim.Config, maxHeight uint64) (*sim.Node, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	cfg.MaxHeight = maxHeight
	node, err := sim.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close(context.Background()) })
	require.NoError(t, node.ProduceTo(ctx, maxHeight))
	srv := httptest.NewServer(node.Handler())
	t.Cleanup(srv.Close)
	return node, srv
}

func indexSim(t *testing.T, s *store.Store, to uint64, genesis *os.File, endpoints ...string) {
	t.Helper()
	ctx := context.Background()
	client, err := near.NewClient(near.ClientConfig{Endpoints: endpoints, Timeout: 2 * time.Second,
		BaseBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 20})
	require.NoError(t, err)
	if genesis != nil {
		_, err := indexer.LoadGenesis(ctx, genesis, s, nil)
		require.NoError(t, err)
	}
	src := nodeSource(t, client, indexer.NodeConfig{TxStallWait: 200 * time.Millisecond, TxPollInterval: 20 * time.Millisecond})
	ix, err := indexer.New(indexer.Config{To: &to, Workers: 6, BatchSize: 25}, src, s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))
}

// checkAgainstSim compares every stored answer with the simulator's.
func checkAgainstSim(t *testing.T, node *sim.Node, s *store.Store, lo, hi uint64) {
	ctx := context.Background()
	accounts := map[string]bool{}
	var skipped, missingChunks, txs int
	for h := lo; h <= hi; h++ {
		want, err := node.Block(ctx, blockRef(t, h))
		got, gotErr := s.BlockView(ctx, near.HeightID(h))
		if near.IsUnknownBlock(err) {
			skipped++
			require.ErrorIs(t, gotErr, store.ErrNotFound, "height %d", h)
			isSkipped, err := storetest.IsSkippedHeight(ctx, s, h)
			require.NoError(t, err)
			require.True(t, isSkipped, "height %d recorded as skipped", h)
			continue
		}
		require.NoError(t, err)
		require.NoError(t, gotErr, "height %d", h)
		require.JSONEq(t, string(want), string(got), "block %d", h)
		var block near.BlockView
		require.NoError(t, json.Unmarshal(want, &block))

		for _, c := range block.Chunks {
			if c.HeightIncluded != h {
				missingChunks++
			}
			req, perr := near.ParseChunkRequest(params(t, map[string]any{"block_id": h, "shard_id": c.ShardID}))
			require.Nil(t, perr)
			wantChunk, err := node.Chunk(ctx, req)
			require.NoError(t, err)
			hash, err := s.ChunkHashAt(ctx, h, c.ShardID)
			require.NoError(t, err)
			gotChunk, err := s.ChunkView(ctx, hash)
			require.NoError(t, err)
			require.JSONEq(t, string(wantChunk), string(gotChunk), "chunk of shard %d at %d", c.ShardID, h)
			if c.HeightIncluded != h {
				continue
			}
			var chunk near.ChunkView
			require.NoError(t, json.Unmarshal(wantChunk, &chunk))
			for _, tx := range chunk.Transactions {
				txs++
				txReq, perr := near.ParseTxRequest(params(t, map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID}))
				require.Nil(t, perr)
				wantTx, err := node.Tx(ctx, txReq, true)
				require.NoError(t, err)
				gotTx, err := s.TxStatus(ctx, tx.Hash, tx.SignerID)
				require.NoError(t, err)
				require.JSONEq(t, string(wantTx), string(gotTx), "tx %s", tx.Hash)
			}
		}

		effects, err := node.BlockEffects(ctx, blockRef(t, h))
		require.NoError(t, err)
		gotEffects, err := s.BlockEffects(ctx, h)
		require.NoError(t, err)
		require.Equal(t, jsonOf(t, effects.Changes), jsonOf(t, gotEffects), "effects at %d", h)
		byType := map[string][]string{}
		for _, e := range effects.Changes {
			accounts[e.AccountID] = true
			byType[e.Type] = append(byType[e.Type], e.AccountID)
		}
		for effect, changesType := range map[string]string{near.EffectAccountTouched: "account_changes",
			near.EffectAccessKeyTouched: "all_access_key_changes", near.EffectDataTouched: "data_changes",
			near.EffectContractCodeTouched: "contract_code_changes"} {
			ids := byType[effect]
			if len(ids) == 0 {
				continue
			}
			// Ask in reverse order: both must answer in request order.
			rev := make([]string, len(ids))
			for i, id := range ids {
				rev[len(ids)-1-i] = id
			}
			p := map[string]any{"block_id": h, "changes_type": changesType, "account_ids": rev}
			if changesType == "data_changes" {
				p["key_prefix_base64"] = ""
			}
			req, perr := near.ParseChangesRequest(params(t, p))
			require.Nil(t, perr)
			want, err := node.Changes(ctx, req)
			require.NoError(t, err)
			got, err := s.StateChanges(ctx, h, changeTypesOf(changesType), rev)
			require.NoError(t, err)
			require.Equal(t, jsonOf(t, want.Changes), jsonOf(t, got), "%s at %d", changesType, h)
		}

		wantCfg, err := node.ProtocolConfig(ctx, blockRef(t, h))
		require.NoError(t, err)
		gotCfg, err := s.ProtocolConfigAt(ctx, h)
		require.NoError(t, err)
		require.JSONEq(t, string(wantCfg), string(gotCfg), "protocol config at %d", h)
	}
	require.Positive(t, skipped, "the simulated chain skipped heights")
	require.Positive(t, missingChunks, "the simulated chain missed chunks")
	require.Positive(t, txs)
	t.Logf("checked heights %d-%d: %d skipped, %d missing chunks, %d transactions, %d accounts", lo, hi, skipped, missingChunks, txs, len(accounts))

	wantGenesis, err := node.GenesisConfig(ctx)
	require.NoError(t, err)
	gotGenesis, err := s.GenesisConfig(ctx)
	require.NoError(t, err)
	require.JSONEq(t, string(wantGenesis), string(gotGenesis))
}

func changeTypesOf(changesType string) []string {
	switch changesType {
	case "account_changes":
		return []string{near.ChangeAccountUpdate, near.ChangeAccountDeletion}
	case "all_access_key_changes":
		return []string{near.ChangeAccessKeyUpdate, near.ChangeAccessKeyDeletion}
	case "data_changes":
		return []string{near.ChangeDataUpdate, near.ChangeDataDeletion}
	}
	return []string{near.ChangeContractCodeUpdate, near.ChangeContractCodeDeletion}
}

// checkStateAgainstSim compares view_account, view_access_key_list,
// view_code and view_state for every genesis account at some heights.
func checkStateAgainstSim(t *testing.T, node *sim.Node, s *store.Store, accounts []string, heights []uint64) {
	ctx := context.Background()
	compared := 0
	for _, h := range heights {
		if _, err := node.Block(ctx, blockRef(t, h)); err != nil {
			continue
		}
		for _, id := range accounts {
			q := func(requestType string, extra map[string]any) (any, error) {
				p := map[string]any{"block_id": h, "request_type": requestType, "account_id": id}
				for k, v := range extra {
					p[k] = v
				}
				req, perr := near.ParseQueryRequest(params(t, p))
				require.Nil(t, perr)
				return node.Query(ctx, req)
			}
			want, err := q(near.QueryViewAccount, nil)
			got, gotErr := s.AccountAt(ctx, id, h)
			var ne *near.Error
			if errors.As(err, &ne) && ne.CauseName() == "UNKNOWN_ACCOUNT" {
				require.ErrorIs(t, gotErr, store.ErrNotFound, "%s at %d", id, h)
				continue
			}
			require.NoError(t, err)
			require.NoError(t, gotErr, "%s at %d", id, h)
			require.Equal(t, jsonOf(t, want.(near.AccountView).Account), jsonOf(t, got), "account %s at %d", id, h)

			want, err = q(near.QueryViewAccessKeyList, nil)
			require.NoError(t, err)
			keys, err := s.AccessKeysAt(ctx, id, h)
			require.NoError(t, err)
			require.Equal(t, jsonOf(t, want.(near.AccessKeyListView).Keys), jsonOf(t, keys), "keys of %s at %d", id, h)

			want, err = q(near.QueryViewCode, nil)
			code, codeHash, gotErr := s.ContractCodeAt(ctx, id, h)
			if errors.As(err, &ne) && ne.CauseName() == "NO_CONTRACT_CODE" {
				require.ErrorIs(t, gotErr, store.ErrNotFound, "code of %s at %d", id, h)
			} else {
				require.NoError(t, err)
				require.NoError(t, gotErr)
				require.Equal(t, want.(near.ContractCodeView).CodeBase64, code)
				require.Equal(t, want.(near.ContractCodeView).Hash, codeHash)
			}

			want, err = q(near.QueryViewState, map[string]any{"prefix_base64": ""})
			items, gotErr := s.ContractStateAt(ctx, id, nil, h, 0)
			if errors.As(err, &ne) && ne.CauseName() == "TOO_LARGE_CONTRACT_STATE" {
				continue
			}
			require.NoError(t, err)
			require.NoError(t, gotErr)
			require.Equal(t, jsonOf(t, want.(near.ViewStateResult).Values), jsonOf(t, items), "state of %s at %d", id, h)
			compared++
		}
	}
	require.Positive(t, compared)
	t.Logf("compared state of %d (account, height) pairs", compared)
}

func genesisFile(t *testing.T, node *sim.Node) (*os.File, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "genesis.json")
	require.NoError(t, node.WriteGenesis(path))
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	var accounts []string
	for _, r := range node.Genesis().Records {
		if r.Account != nil {
			accounts = append(accounts, r.Account.AccountID)
		}
	}
	return f, accounts
}

func TestIndexSimulatedChainMatchesSimulator(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Seed: 11, Shards: 4, SkipRate: 0.08, MissingChunkRate: 0.08, TxsPerBlock: 5, EpochLength: 40, ViewStateLimit: -1}
	const maxHeight = 150
	node, srv := newSim(t, cfg, maxHeight)
	s := storetest.NewStore(t)
	genesis, accounts := genesisFile(t, node)
	indexSim(t, s, maxHeight-5, genesis, srv.URL)
	checkAgainstSim(t, node, s, 0, maxHeight-5)
	checkStateAgainstSim(t, node, s, accounts, []uint64{0, 1, 17, 40, 41, 77, 120, maxHeight - 5})
	start, err := s.HistoryStart(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(0), start)
}

func TestIndexSimulatedChainThroughFaultyUpstream(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Seed: 5, Shards: 3, SkipRate: 0.1, MissingChunkRate: 0.1, TxsPerBlock: 3, ViewStateLimit: -1}
	const maxHeight = 60
	node, healthy := newSim(t, cfg, maxHeight)
	faulty := cfg
	faulty.Faults = sim.FaultConfig{Seed: 3, Fail5xx: 0.2, FailInternal: 0.1, FailMalformed: 0.1,
		Stall: 0.05, StallDuration: 5 * time.Second}
	_, bad := newSim(t, faulty, maxHeight)
	s := storetest.NewStore(t)
	indexSim(t, s, maxHeight, nil, bad.URL, healthy.URL)
	checkAgainstSim(t, node, s, 0, maxHeight)
}

func TestSnapshotAccountsStartHistory(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Seed: 2, Shards: 2, TxsPerBlock: 4, ViewStateLimit: -1}
	node, srv := newSim(t, cfg, 60)
	s := storetest.NewStore(t)
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{srv.URL}})
	require.NoError(t, err)
	_, accounts := genesisFile(t, node)
	ctx := context.Background()
	require.NoError(t, indexer.Snapshot(ctx, client, s, 30, append(accounts, "nobody-here.near"), nil))
	start, err := s.HistoryStart(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(30), start)
	from, to := uint64(30), uint64(60)
	src := nodeSource(t, client, indexer.NodeConfig{TxStallWait: 200 * time.Millisecond})
	ix, err := indexer.New(indexer.Config{From: &from, To: &to}, src, s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))
	checkStateAgainstSim(t, node, s, accounts, []uint64{30, 31, 45, 60})
	_, err = s.AccountAt(ctx, accounts[0], 29)
	require.ErrorIs(t, err, store.ErrNotFound, "nothing is known before the snapshot")
}

func TestGarbageCollectedUpstreamNeedsArchivalNode(t *testing.T) {
	t.Parallel()
	_, srv := newSim(t, sim.Config{Seed: 4, Shards: 2, GCWindow: 20}, 80)
	s := storetest.NewStore(t)
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{srv.URL}, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	require.NoError(t, err)
	from, to := uint64(5), uint64(30)
	ix, err := indexer.New(indexer.Config{From: &from, To: &to}, nodeSource(t, client, indexer.NodeConfig{}), s, nil)
	require.NoError(t, err)
	err = ix.Run(context.Background())
	require.ErrorIs(t, err, near.ErrNeedsArchival)
	require.ErrorContains(t, err, "needs an archival node")
	_, _, err = s.LatestBlock(context.Background())
	require.ErrorIs(t, err, store.ErrNotFound, "nothing was written")
}

func TestForkedUpstreamStopsWithContinuityError(t *testing.T) {
	t.Parallel()
	node, srv := newSim(t, sim.Config{Seed: 8, Shards: 2, ForkAt: 25, TxsPerBlock: 2}, 40)
	s := storetest.NewStore(t)
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{srv.URL}})
	require.NoError(t, err)
	to := uint64(40)
	ix, err := indexer.New(indexer.Config{To: &to, BatchSize: 10}, nodeSource(t, client, indexer.NodeConfig{}), s, nil)
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
	_ = node
}

func TestNonFinalTxStatusesAreRevisited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sim.Config{Seed: 21, Shards: 2, TxsPerBlock: 6, ViewStateLimit: -1, MaxHeight: 80,
		YieldTimeout: 4} // yields end within a few blocks, as the other receipts do
	node, err := sim.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = node.Close(context.Background()) })
	require.NoError(t, node.ProduceTo(ctx, 40))
	srv := httptest.NewServer(node.Handler())
	t.Cleanup(srv.Close)
	s := storetest.NewStore(t)
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{srv.URL}})
	require.NoError(t, err)
	src := nodeSource(t, client, indexer.NodeConfig{TxStallWait: 50 * time.Millisecond, TxPollInterval: 10 * time.Millisecond})
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
	requireRevisited(t, node, s, pending, 40)
	var outcomes, wantOutcomes int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM execution_outcomes WHERE tx_block_height <= 40`).Scan(&outcomes))
	rows, err := s.Pool().Query(ctx, `SELECT tx_hash, signer_id, block_height FROM transaction_statuses WHERE block_height <= 40`)
	require.NoError(t, err)
	refs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[store.TxRef])
	require.NoError(t, err)
	for _, ref := range refs {
		raw, err := s.TxStatus(ctx, ref.TxHash, ref.SignerID)
		require.NoError(t, err)
		var st struct {
			ReceiptsOutcome []json.RawMessage `json:"receipts_outcome"`
		}
		require.NoError(t, json.Unmarshal(raw, &st))
		wantOutcomes += len(st.ReceiptsOutcome) + 1
	}
	require.Equal(t, wantOutcomes, outcomes, "outcomes replaced, not duplicated")
}

// requireRevisited requires each of pending (statuses stored before they
// were FINAL, included at or below height) to be the simulator's
// EXPERIMENTAL_tx_status now, and none pending any more.
func requireRevisited(t *testing.T, node *sim.Node, s *store.Store, pending []store.TxRef, height uint64) {
	t.Helper()
	ctx := context.Background()
	for _, ref := range pending {
		req, perr := near.ParseTxRequest(params(t, map[string]any{"tx_hash": ref.TxHash, "sender_account_id": ref.SignerID}))
		require.Nil(t, perr)
		want, err := node.Tx(ctx, req, true)
		require.NoError(t, err)
		got, err := s.TxStatus(ctx, ref.TxHash, ref.SignerID)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), "tx %s revisited", ref.TxHash)
	}
	still, err := s.PendingTxStatuses(ctx, height, 1000)
	require.NoError(t, err)
	require.Empty(t, still)
}

func TestIndexFromMidChainStoresRepeatedOlderChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	node, srv := newSim(t, sim.Config{Seed: 13, Shards: 3, MissingChunkRate: 0.5, TxsPerBlock: 2}, 60)
	s := storetest.NewStore(t)
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{srv.URL}})
	require.NoError(t, err)
	from, to := uint64(30), uint64(60)
	ix, err := indexer.New(indexer.Config{From: &from, To: &to, BatchSize: 8},
		nodeSource(t, client, indexer.NodeConfig{TxStallWait: 50 * time.Millisecond}), s, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx))
	older := 0
	for h := from; h <= to; h++ {
		raw, err := node.Block(ctx, blockRef(t, h))
		if err != nil {
			continue
		}
		var block near.BlockView
		require.NoError(t, json.Unmarshal(raw, &block))
		for _, c := range block.Chunks {
			if c.HeightIncluded < from {
				older++
			}
			req, perr := near.ParseChunkRequest(params(t, map[string]any{"block_id": h, "shard_id": c.ShardID}))
			require.Nil(t, perr)
			want, err := node.Chunk(ctx, req)
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
		nodeSource(t, client, indexer.NodeConfig{TxStallWait: 50 * time.Millisecond}), s, nil)
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
	cfg := sim.Config{Seed: 2, Shards: 2, TxsPerBlock: 4, ViewStateLimit: -1, NearcoreNext: true}
	node, srv := newSim(t, cfg, 40)
	s := storetest.NewStore(t)
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{srv.URL}})
	require.NoError(t, err)
	_, accounts := genesisFile(t, node)
	ctx := context.Background()
	const height = 30
	require.NoError(t, indexer.Snapshot(ctx, client, s, height, accounts, nil))
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
		require.Equal(t, string(want), jsonOf(t, near.AccountView{Account: acc, BlockStamp: stamp}), "account %s", id)
		want, stamp = served(near.QueryViewAccessKeyList)
		keys, err := s.AccessKeysAt(ctx, id, height)
		require.NoError(t, err)
		require.Equal(t, string(want), jsonOf(t, near.AccessKeyListView{Keys: keys, BlockStamp: stamp}), "keys of %s", id)
	}
}
