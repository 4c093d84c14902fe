package basestate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/chain"
	"github.com/nearline/nearline/store/storetest"
)

// TestGenesisFileIsCheckedThenLoadedOnce: a genesis file of another chain
// than the upstream's is refused naming both; the file is loaded once,
// after which neither the check nor a second load reads it.
func TestGenesisFileIsCheckedThenLoadedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	path := filepath.Join(t.TempDir(), "genesis.json")
	require.NoError(t, os.WriteFile(path, []byte(genesisJSON), 0o644))

	cfg, err := basestate.GenesisConfigOf(path)
	require.NoError(t, err)
	id, err := chain.FromConfig(cfg)
	require.NoError(t, err)
	require.Equal(t, chain.Identity{ChainID: "test", GenesisHeight: 42, Config: id.Config}, id)
	require.NoError(t, basestate.CheckGenesisFile(ctx, path, s, id, "the upstream U"))
	err = basestate.CheckGenesisFile(ctx, path, s, chain.Identity{ChainID: "test", GenesisHeight: 7}, "the upstream U")
	require.ErrorIs(t, err, chain.ErrOtherChain)
	require.ErrorContains(t, err, "genesis_height: --genesis "+path+" says 42, the upstream U says 7")

	require.NoError(t, basestate.LoadGenesisFile(ctx, path, s, nil))
	start, err := s.HistoryStart(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(42), start)
	require.NoError(t, os.Remove(path))
	require.NoError(t, basestate.LoadGenesisFile(ctx, path, s, nil), "loaded already: the file is not read")
	require.NoError(t, basestate.CheckGenesisFile(ctx, path, s, chain.Identity{ChainID: "other"}, "the upstream U"),
		"loaded already: the archive's chain stands for it")
}
