package basestate_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// A genesis file with records before genesis_height and a record kind that
// is not state (DelayedReceipt).
const genesisJSON = `{
  "protocol_version": 73,
  "records": [
    {"Account": {"account_id": "alice.near", "account": {"amount": "1000000000000000000000000", "locked": "0",
      "code_hash": "11111111111111111111111111111111", "storage_usage": 182, "version": "V1"}}},
    {"AccessKey": {"account_id": "alice.near", "public_key": "ed25519:9W5Xu8dVKhu1h2Ymx5fQtXkmzSVyvwTyQuXbtjAaKqdT",
      "access_key": {"nonce": 0, "permission": "FullAccess"}}},
    {"Contract": {"account_id": "alice.near", "code": "AGFzbQEAAAA="}},
    {"Data": {"account_id": "alice.near", "data_key": "U1RBVEU=", "value": "AQI="}},
    {"DelayedReceipt": {"receipt": {}}}
  ],
  "genesis_height": 42,
  "chain_id": "test"
}`

func TestLoadGenesisStreamsRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	height, err := basestate.LoadGenesis(ctx, strings.NewReader(genesisJSON), s, nil)
	require.NoError(t, err)
	require.Equal(t, uint64(42), height)
	start, err := s.HistoryStart(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(42), start)

	acc, err := s.AccountAt(ctx, "alice.near", 42)
	require.NoError(t, err)
	require.Equal(t, "1000000000000000000000000", acc.Amount.String())
	require.Equal(t, uint64(182), acc.StorageUsage)
	_, err = s.AccountAt(ctx, "alice.near", 41)
	require.ErrorIs(t, err, store.ErrNotFound)
	keys, err := s.AccessKeysAt(ctx, "alice.near", 1000)
	require.NoError(t, err)
	require.Len(t, keys, 1)
	code, hash, err := s.ContractCodeAt(ctx, "alice.near", 42)
	require.NoError(t, err)
	require.Equal(t, []byte("\x00asm\x01\x00\x00\x00"), code)
	require.Equal(t, near.HashOf(code).String(), hash)
	value, err := s.ContractDataAt(ctx, "alice.near", []byte("STATE"), 50)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2}, value)

	// Loading again changes nothing.
	_, err = basestate.LoadGenesis(ctx, strings.NewReader(genesisJSON), s, nil)
	require.NoError(t, err)
	var rows int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM account_history) + (SELECT count(*) FROM access_key_history)
		+ (SELECT count(*) FROM contract_code_history) + (SELECT count(*) FROM contract_data_history)`).Scan(&rows))
	require.Equal(t, 4, rows)
}

// TestLoadGenesisKeepsWhatNearlineDoesNotModel loads a newer nearcore's
// genesis: the members of an account and an access key beyond the modelled
// ones are answered as the records carried them; the account's version is
// a genesis-only member, never answered.
func TestLoadGenesisKeepsWhatNearlineDoesNotModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	const newer = `{"genesis_height": 7, "records": [
	  {"Account": {"account_id": "alice.near", "account": {"amount": "5", "locked": "0", "code_hash": "11111111111111111111111111111111",
	    "storage_usage": 182, "version": "V2", "global_contract_hash": null, "global_contract_account_id": "code.near"}}},
	  {"Account": {"account_id": "bob.near", "account": {"amount": "6", "locked": "0", "code_hash": "11111111111111111111111111111111",
	    "storage_usage": 182, "version": "V1"}}},
	  {"AccessKey": {"account_id": "alice.near", "public_key": "ed25519:9W5Xu8dVKhu1h2Ymx5fQtXkmzSVyvwTyQuXbtjAaKqdT",
	    "access_key": {"nonce": 3, "permission": "FullAccess", "gas_key_info": {"balance": "1", "num_nonces": 2}}}},
	  {"AccessKey": {"account_id": "bob.near", "public_key": "ed25519:9W5Xu8dVKhu1h2Ymx5fQtXkmzSVyvwTyQuXbtjAaKqdT",
	    "access_key": {"nonce": 4, "permission": "FullAccess"}}}
	]}`
	_, err := basestate.LoadGenesis(ctx, strings.NewReader(newer), s, nil)
	require.NoError(t, err)

	for _, tc := range []struct{ account, view, key string }{
		{"alice.near",
			`{"amount":"5","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"storage_paid_at":0,"global_contract_hash":null,"global_contract_account_id":"code.near","block_height":7,"block_hash":"h"}`,
			`{"nonce":3,"permission":"FullAccess","gas_key_info":{"balance":"1","num_nonces":2},"block_height":7,"block_hash":"h"}`},
		{"bob.near",
			`{"amount":"6","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"storage_paid_at":0,"block_height":7,"block_hash":"h"}`,
			`{"nonce":4,"permission":"FullAccess","block_height":7,"block_hash":"h"}`},
	} {
		stamp := near.BlockStamp{BlockHeight: 7, BlockHash: "h"}
		acc, err := s.AccountAt(ctx, tc.account, 7)
		require.NoError(t, err)
		view, err := json.Marshal(near.AccountView{Account: acc, BlockStamp: stamp})
		require.NoError(t, err)
		require.Equal(t, tc.view, string(view))
		key, err := s.AccessKeyAt(ctx, tc.account, "ed25519:9W5Xu8dVKhu1h2Ymx5fQtXkmzSVyvwTyQuXbtjAaKqdT", 7)
		require.NoError(t, err)
		result, err := json.Marshal(near.AccessKeyResult{AccessKeyView: key, BlockStamp: stamp})
		require.NoError(t, err)
		require.Equal(t, tc.key, string(result))
	}
	var nulls int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM account_history WHERE extra IS NULL)
		+ (SELECT count(*) FROM access_key_history WHERE extra IS NULL)`).Scan(&nulls))
	require.Equal(t, 2, nulls, "bob's account and key, with nothing more, store NULL")
}

func TestLoadGenesisRejectsBadFiles(t *testing.T) {
	t.Parallel()
	s := storetest.NewStore(t)
	for name, body := range map[string]string{
		"no height":    `{"records": []}`,
		"no records":   `{"genesis_height": 1}`,
		"not json":     `{"genesis_height": 1, "records": [`,
		"bad record":   `{"genesis_height": 1, "records": [{"Account": 5}]}`,
		"not a object": `[]`,
	} {
		_, err := basestate.LoadGenesis(context.Background(), strings.NewReader(body), s, nil)
		require.Error(t, err, name)
	}
}
