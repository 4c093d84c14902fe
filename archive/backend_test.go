package archive

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/rpctest"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/store/storetest"
)

func archiveHandler(t testing.TB, st Store, cfg rpcserve.Config, acfg Config) http.Handler {
	t.Helper()
	vm, err := nearvm.New(context.Background(), nearvm.Config{}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = vm.Close(context.Background()) })
	backend, err := New(st, vm, acfg, nil)
	require.NoError(t, err)
	h, err := rpcserve.NewHandler(backend, cfg, nil)
	require.NoError(t, err)
	return h
}

func okResult(t *testing.T, h http.Handler, method string, params any, into any) json.RawMessage {
	t.Helper()
	res, rerr := rpctest.Call(t, h, method, params)
	require.Nil(t, rerr, "%s %v: unexpected error %v", method, params, rerr)
	if into != nil {
		require.NoError(t, json.Unmarshal(res, into), string(res))
	}
	return res
}

func errCause(t *testing.T, h http.Handler, method string, params any) *near.Error {
	t.Helper()
	res, rerr := rpctest.Call(t, h, method, params)
	require.NotNil(t, rerr, "%s %v: want an error, got %s", method, params, res)
	return rerr
}

type headerOnly struct {
	Header struct {
		Height uint64 `json:"height"`
		Hash   string `json:"hash"`
	} `json:"header"`
}

func TestArchiveBeforeAnyBlock(t *testing.T) {
	t.Parallel()
	h := archiveHandler(t, storetest.NewStore(t), rpcserve.Config{}, Config{})

	require.Equal(t, "NOT_SYNCED_YET", errCause(t, h, "block", map[string]any{"finality": "final"}).CauseName())
	require.Equal(t, "NOT_SYNCED_YET", errCause(t, h, "block", map[string]any{"block_id": 5}).CauseName())
	require.Equal(t, "NO_SYNCED_BLOCKS", errCause(t, h, "query",
		map[string]any{"request_type": "view_account", "account_id": "alice.near", "finality": "final"}).CauseName())
	require.Equal(t, "NOT_SYNCED_YET", errCause(t, h, "health", []any{}).CauseName())

	var status near.StatusView
	okResult(t, h, "status", []any{}, &status)
	require.True(t, status.SyncInfo.Syncing)
	require.Zero(t, status.SyncInfo.LatestBlockHeight)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
}

func TestArchiveBlocksAndChunks(t *testing.T) {
	t.Parallel()
	h := archiveHandler(t, seedStore(t), rpcserve.Config{}, Config{})

	for _, finality := range []string{"final", "near-final", "optimistic"} {
		var b headerOnly
		okResult(t, h, "block", map[string]any{"finality": finality}, &b)
		require.Equal(t, uint64(seedHead), b.Header.Height, finality)
	}
	var b headerOnly
	okResult(t, h, "block", map[string]any{"block_id": 11}, &b)
	require.Equal(t, seedHash("block", 11), b.Header.Hash)
	okResult(t, h, "block", map[string]any{"block_id": seedHash("block", 10)}, &b)
	require.Equal(t, uint64(10), b.Header.Height)

	// The stored block comes back exactly as stored.
	raw := okResult(t, h, "block", map[string]any{"block_id": 13}, nil)
	want, err := json.Marshal(seedBundle(13, 11, nil).Block)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(raw))

	for _, id := range []any{seedSkip, seedHead + 1, uint64(18446744073709551615), seedHash("block", 99)} {
		e := errCause(t, h, "block", map[string]any{"block_id": id})
		require.Equal(t, "UNKNOWN_BLOCK", e.CauseName(), "block_id %v", id)
	}
	before := errCause(t, h, "block", map[string]any{"block_id": 9})
	require.Equal(t, "UNKNOWN_BLOCK", before.CauseName())
	require.Contains(t, string(before.Data), "first block this archive holds (#10)")

	var chunk struct {
		Header struct {
			ChunkHash string `json:"chunk_hash"`
		} `json:"header"`
	}
	okResult(t, h, "chunk", map[string]any{"chunk_id": seedHash("chunk", 11)}, &chunk)
	require.Equal(t, seedHash("chunk", 11), chunk.Header.ChunkHash)
	okResult(t, h, "chunk", map[string]any{"block_id": 13, "shard_id": 0}, &chunk)
	require.Equal(t, seedHash("chunk", 13), chunk.Header.ChunkHash)
	require.Equal(t, "INVALID_SHARD_ID", errCause(t, h, "chunk", map[string]any{"block_id": 13, "shard_id": 3}).CauseName())
	require.Equal(t, "UNKNOWN_CHUNK", errCause(t, h, "chunk", map[string]any{"chunk_id": seedHash("chunk", 99)}).CauseName())
	require.Equal(t, "UNKNOWN_BLOCK", errCause(t, h, "chunk", map[string]any{"block_id": seedSkip, "shard_id": 0}).CauseName())

	var gas near.GasPriceView
	okResult(t, h, "gas_price", []any{nil}, &gas)
	require.Equal(t, "100000013", gas.GasPrice.String())
	okResult(t, h, "gas_price", []any{11}, &gas)
	require.Equal(t, "100000011", gas.GasPrice.String())
	require.Equal(t, "UNKNOWN_BLOCK", errCause(t, h, "gas_price", []any{seedSkip}).CauseName())

	var effects struct {
		BlockHash    string                     `json:"block_hash"`
		Changes      []near.StateChangeKindView `json:"changes"`
		BlockEffects []near.StateChangeKindView `json:"block_effects"`
	}
	okResult(t, h, "block_effects", map[string]any{"block_id": 11}, &effects)
	require.Equal(t, seedHash("block", 11), effects.BlockHash)
	require.Equal(t, []near.StateChangeKindView{
		{Type: near.EffectAccountTouched, AccountID: "alice.near"},
		{Type: near.EffectAccessKeyTouched, AccountID: "alice.near"},
		{Type: near.EffectDataTouched, AccountID: "status.near"},
	}, effects.Changes)
	require.Equal(t, effects.Changes, effects.BlockEffects)
	raw = okResult(t, h, "EXPERIMENTAL_changes_in_block", map[string]any{"block_id": 13}, nil)
	require.JSONEq(t, `{"block_hash":"`+seedHash("block", 13)+`","changes":[]}`, string(raw))
}

func TestArchiveChanges(t *testing.T) {
	t.Parallel()
	h := archiveHandler(t, seedStore(t), rpcserve.Config{}, Config{})
	changes := func(params map[string]any) []near.StateChangeWithCauseView {
		t.Helper()
		var view near.ChangesView
		okResult(t, h, "changes", params, &view)
		return view.Changes
	}

	got := changes(map[string]any{"changes_type": "account_changes", "account_ids": []string{"alice.near", "nobody.near"}, "block_id": 11})
	require.Len(t, got, 1)
	require.Equal(t, near.ChangeAccountUpdate, got[0].Type)
	require.Equal(t, "90", got[0].Change.Account.Amount.String())

	got = changes(map[string]any{"changes_type": "all_access_key_changes", "account_ids": []string{"alice.near"}, "block_id": 10})
	require.Len(t, got, 2)
	require.Equal(t, seedPK1, *got[0].Change.PublicKey)
	require.Equal(t, seedPK2, *got[1].Change.PublicKey)

	keys := []near.AccountPublicKey{{AccountID: "alice.near", PublicKey: seedPK2}}
	got = changes(map[string]any{"changes_type": "single_access_key_changes", "keys": keys, "block_id": 10})
	require.Len(t, got, 1)
	require.Equal(t, seedPK2, *got[0].Change.PublicKey)
	got = changes(map[string]any{"changes_type": "single_access_key_changes", "keys": keys, "block_id": 11})
	require.Len(t, got, 1)
	require.Equal(t, near.ChangeAccessKeyDeletion, got[0].Type)

	prefix := func(p string) string { return base64.StdEncoding.EncodeToString([]byte(p)) }
	got = changes(map[string]any{"changes_type": "data_changes", "account_ids": []string{"status.near"}, "key_prefix_base64": prefix("STATE"), "block_id": 10})
	require.Len(t, got, 1)
	require.Equal(t, "STATE", string(*got[0].Change.KeyBase64))
	got = changes(map[string]any{"changes_type": "data_changes", "account_ids": []string{"status.near"}, "key_prefix_base64": "", "block_id": 10})
	require.Len(t, got, 2)

	got = changes(map[string]any{"changes_type": "contract_code_changes", "account_ids": []string{"status.near"}, "block_id": 10})
	require.Len(t, got, 1)
	require.Equal(t, statusWasm(t), *got[0].Change.CodeBase64)
	require.Empty(t, changes(map[string]any{"changes_type": "contract_code_changes", "account_ids": []string{"status.near"}, "finality": "final"}))

	require.Equal(t, "UNKNOWN_BLOCK", errCause(t, h, "EXPERIMENTAL_changes",
		map[string]any{"changes_type": "account_changes", "account_ids": []string{"alice.near"}, "block_id": seedSkip}).CauseName())
}
