package indexer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/indexer"
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
	height, err := indexer.LoadGenesis(ctx, strings.NewReader(genesisJSON), s, nil)
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
	_, err = indexer.LoadGenesis(ctx, strings.NewReader(genesisJSON), s, nil)
	require.NoError(t, err)
	var rows int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM account_history) + (SELECT count(*) FROM access_key_history)
		+ (SELECT count(*) FROM contract_code_history) + (SELECT count(*) FROM contract_data_history)`).Scan(&rows))
	require.Equal(t, 4, rows)
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
		_, err := indexer.LoadGenesis(context.Background(), strings.NewReader(body), s, nil)
		require.Error(t, err, name)
	}
}
