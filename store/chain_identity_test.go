package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/chain"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestChainIdentityIsRecordedOnce: the first record holds; a later one of
// the same chain fills a genesis hash that was unknown, and nothing
// replaces what is recorded.
func TestChainIdentityIsRecordedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	_, err := s.ChainIdentity(ctx)
	require.ErrorIs(t, err, store.ErrNotFound)

	require.NoError(t, s.RecordChainIdentity(ctx, chain.Identity{ChainID: "sim", GenesisHeight: 3}))
	require.NoError(t, s.RecordChainIdentity(ctx, chain.Identity{ChainID: "sim", GenesisHeight: 3, GenesisHash: "H"}))
	require.NoError(t, s.RecordChainIdentity(ctx, chain.Identity{ChainID: "sim", GenesisHeight: 3, GenesisHash: "other"}))
	require.NoError(t, s.RecordChainIdentity(ctx, chain.Identity{ChainID: "testnet", GenesisHeight: 7, GenesisHash: "T"}))
	cfg := json.RawMessage(`{"chain_id":"sim","genesis_height":3}`)
	require.NoError(t, s.PutGenesisConfig(ctx, cfg))
	id, err := s.ChainIdentity(ctx)
	require.NoError(t, err)
	require.Equal(t, "sim", id.ChainID)
	require.Equal(t, uint64(3), id.GenesisHeight)
	require.Equal(t, "H", id.GenesisHash)
	require.JSONEq(t, string(cfg), string(id.Config))
}

// TestChainIdentityOfAnOlderArchive: an archive indexed before the chain
// was recorded is known by its genesis config and its genesis block.
func TestChainIdentityOfAnOlderArchive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 4, Shards: 1})
	require.NoError(t, s.PutGenesisConfig(ctx, json.RawMessage(`{"chain_id":"old","genesis_height":1}`)))
	id, err := s.ChainIdentity(ctx)
	require.NoError(t, err)
	require.Equal(t, chain.Identity{ChainID: "old", GenesisHeight: 1, Config: id.Config}, id, "no genesis block: no hash")
	commitRange(t, s, c, 1, 4, 0)
	id, err = s.ChainIdentity(ctx)
	require.NoError(t, err)
	require.Equal(t, storetest.BlockHash(1), id.GenesisHash)
}
