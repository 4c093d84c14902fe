package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/chain"
	"github.com/nearline/nearline/store/storetest"
)

// TestCheckChainRecordsThenRefusesAnotherChain: an archive with no chain
// takes the upstream's; the same chain passes and fills its genesis hash;
// another chain is refused naming both sides, and nothing is recorded.
func TestCheckChainRecordsThenRefusesAnotherChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	require.NoError(t, s.CheckChain(ctx, chain.Identity{ChainID: "sim", GenesisHeight: 3}, "the upstream A"))
	require.NoError(t, s.CheckChain(ctx, chain.Identity{ChainID: "sim", GenesisHeight: 3, GenesisHash: "H"}, "the upstream A"))

	err := s.CheckChain(ctx, chain.Identity{ChainID: "sim", GenesisHeight: 3, GenesisHash: "other"}, "the upstream B")
	require.ErrorIs(t, err, chain.ErrOtherChain)
	require.ErrorContains(t, err, `the upstream B is of another chain than the archive (genesis block hash: the archive says "H", the upstream B says "other")`)
	id, err := s.ChainIdentity(ctx)
	require.NoError(t, err)
	require.Equal(t, "H", id.GenesisHash, "nothing recorded")
}
