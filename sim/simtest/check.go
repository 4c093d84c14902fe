package simtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
	"github.com/stretchr/testify/require"
)

// Params marshals v as a request's params.
func Params(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// BlockRef is the reference to height h.
func BlockRef(t testing.TB, h uint64) near.BlockReference {
	ref, perr := near.ParseBlockReference(Params(t, map[string]any{"block_id": h}))
	require.NoError(t, perr)
	return ref
}

// Document decodes into v the block document the node at url serves as
// neardata for height.
func Document(t testing.TB, url string, height uint64, v any) {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/v0/block/%d", url, height))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "document %d", height)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v), "document %d", height)
}

// JSONOf marshals v.
func JSONOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// Check compares every stored answer with the simulator's.
func Check(t testing.TB, node *sim.Node, s *store.Store, lo, hi uint64) {
	ctx := context.Background()
	accounts := map[string]bool{}
	var skipped, missingChunks, txs int
	for h := lo; h <= hi; h++ {
		want, err := node.Block(ctx, BlockRef(t, h))
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
			req, perr := near.ParseChunkRequest(Params(t, map[string]any{"block_id": h, "shard_id": c.ShardID}))
			require.NoError(t, perr)
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
				requireTxStatus(t, node, s, tx.Hash, tx.SignerID, "tx %s", tx.Hash)
			}
		}

		effects, err := node.BlockEffects(ctx, BlockRef(t, h))
		require.NoError(t, err)
		gotEffects, err := s.BlockEffects(ctx, h)
		require.NoError(t, err)
		require.Equal(t, JSONOf(t, effects.Changes), JSONOf(t, gotEffects), "effects at %d", h)
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
			req, perr := near.ParseChangesRequest(Params(t, p))
			require.NoError(t, perr)
			want, err := node.Changes(ctx, req)
			require.NoError(t, err)
			got, err := s.StateChanges(ctx, h, changeTypesOf(changesType), rev)
			require.NoError(t, err)
			require.Equal(t, JSONOf(t, want.Changes), JSONOf(t, got), "%s at %d", changesType, h)
		}

		wantCfg, err := node.ProtocolConfig(ctx, BlockRef(t, h))
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

// CheckState compares view_account, view_access_key_list,
// view_code and view_state for every genesis account at some heights.
func CheckState(t testing.TB, node *sim.Node, s *store.Store, accounts []string, heights []uint64) {
	ctx := context.Background()
	compared := 0
	for _, h := range heights {
		if _, err := node.Block(ctx, BlockRef(t, h)); err != nil {
			continue
		}
		for _, id := range accounts {
			q := func(requestType string, extra map[string]any) (any, error) {
				p := map[string]any{"block_id": h, "request_type": requestType, "account_id": id}
				for k, v := range extra {
					p[k] = v
				}
				req, perr := near.ParseQueryRequest(Params(t, p))
				require.NoError(t, perr)
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
			require.Equal(t, JSONOf(t, want.(near.AccountView).Account), JSONOf(t, got), "account %s at %d", id, h)

			want, err = q(near.QueryViewAccessKeyList, nil)
			require.NoError(t, err)
			keys, err := s.AccessKeysAt(ctx, id, h)
			require.NoError(t, err)
			require.Equal(t, JSONOf(t, want.(near.AccessKeyListView).Keys), JSONOf(t, keys), "keys of %s at %d", id, h)

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
			require.Equal(t, JSONOf(t, want.(near.ViewStateResult).Values), JSONOf(t, items), "state of %s at %d", id, h)
			compared++
		}
	}
	require.Positive(t, compared)
	t.Logf("compared state of %d (account, height) pairs", compared)
}

// RequireRevisited requires each of pending (statuses stored before they
// were FINAL, included at or below height) to be the simulator's
// EXPERIMENTAL_tx_status now, and none pending any more.
func RequireRevisited(t testing.TB, node *sim.Node, s *store.Store, pending []bundle.TxRef, height uint64) {
	t.Helper()
	ctx := context.Background()
	for _, ref := range pending {
		requireTxStatus(t, node, s, ref.TxHash, ref.SignerID, "tx %s revisited", ref.TxHash)
	}
	still, err := s.PendingTxStatuses(ctx, height, 1000)
	require.NoError(t, err)
	require.Empty(t, still)
}

// requireTxStatus requires s's stored EXPERIMENTAL_tx_status of hash to be
// the simulator's, msgAndArgs naming it in a failure.
func requireTxStatus(t testing.TB, node *sim.Node, s *store.Store, hash, signer string, msgAndArgs ...any) {
	t.Helper()
	ctx := context.Background()
	req, perr := near.ParseTxRequest(Params(t, map[string]any{"tx_hash": hash, "sender_account_id": signer}))
	require.NoError(t, perr)
	want, err := node.Tx(ctx, req, true)
	require.NoError(t, err)
	got, err := s.TxStatus(ctx, hash, signer, true)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got), msgAndArgs...)
}
