package archive_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/rpctest"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// epochChain is a simulated chain of 10-height epochs whose heights 20,
// 40 and 50, the first heights of epochs 2, 4 and 5, are skipped: those
// epochs start at their first block, 21, 41 and 51; and an archive that
// index fills from it.
type epochChain struct {
	node     *sim.Node
	upstream string // the node served over HTTP
	simH     http.Handler
	st       *store.Store
	vm       *nearvm.Runtime
	archiveH http.Handler          // over st, forwarding nothing
	index    func(from, to uint64) // produces the chain up to to and indexes from..to into st
}

func newEpochChain(t *testing.T, ctx context.Context) *epochChain {
	t.Helper()
	chain := simtest.Start(t, sim.Config{Seed: 13, Shards: 2, TxsPerBlock: 2, EpochLength: 10, SkipRate: 0.2, MaxHeight: 59})
	node := chain.Node
	simH, err := rpcserve.NewHandler(node, rpcserve.Config{}, nil)
	require.NoError(t, err)
	vm, err := nearvm.New(ctx, nearvm.Config{}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = vm.Close(context.Background()) })
	st := storetest.NewStore(t)
	c := &epochChain{node: node, upstream: chain.URL, simH: simH, st: st, vm: vm, archiveH: archiveHandler(t, st, vm, "")}
	c.index = func(from, to uint64) {
		t.Helper()
		require.NoError(t, node.ProduceTo(ctx, to))
		chain.Index(t, st, indexer.Config{From: &from, To: &to})
	}
	return c
}

// syncInfo is the part of status's sync_info the epoch tests compare.
type syncInfo struct {
	LatestBlockHeight uint64  `json:"latest_block_height"`
	EpochID           *string `json:"epoch_id"`
	EpochStartHeight  *uint64 `json:"epoch_start_height"`
}

func statusSyncInfo(t *testing.T, h http.Handler) syncInfo {
	t.Helper()
	var resp struct {
		Result struct {
			SyncInfo syncInfo `json:"sync_info"`
		} `json:"result"`
	}
	body := post(t, h, rpctest.Request("status", []any{}))
	require.NoError(t, json.Unmarshal(body, &resp), string(body))
	return resp.Result.SyncInfo
}

// TestStatusEpochStartMatchesSimulator follows a chain of several epochs,
// some starting after a skipped height, and checks at heads in each that
// the archive's status names the head's epoch and its first height as the
// simulator's (nearcore's) does: epoch_start_height was null before.
func TestStatusEpochStartMatchesSimulator(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newEpochChain(t, ctx)

	starts := map[uint64]bool{}
	from := uint64(0)
	for _, head := range []uint64{0, 5, 18, 21, 33, 44, 52, 59} {
		c.index(from, head)
		from = head + 1
		want, got := statusSyncInfo(t, c.simH), statusSyncInfo(t, c.archiveH)
		require.NotNil(t, want.EpochStartHeight)
		require.Equal(t, want, got, "head %d", head)
		starts[*got.EpochStartHeight] = true
	}
	// Epochs 0 to 5 were seen, and those after a skipped height start at
	// their first block.
	require.Equal(t, map[uint64]bool{0: true, 10: true, 21: true, 30: true, 41: true, 51: true}, starts)
}

// TestStatusEpochStartOfAnArchiveBeginningMidEpoch: an archive that
// begins inside an epoch does not know where that epoch started, and says
// null rather than a wrong height, until the head reaches the next epoch.
func TestStatusEpochStartOfAnArchiveBeginningMidEpoch(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := newEpochChain(t, ctx)

	c.index(23, 27)
	want, got := statusSyncInfo(t, c.simH), statusSyncInfo(t, c.archiveH)
	require.Equal(t, uint64(21), *want.EpochStartHeight)
	require.Equal(t, want.EpochID, got.EpochID)
	require.Nil(t, got.EpochStartHeight)

	c.index(28, 36)
	require.Equal(t, statusSyncInfo(t, c.simH), statusSyncInfo(t, c.archiveH))
	require.Equal(t, uint64(30), *statusSyncInfo(t, c.archiveH).EpochStartHeight)
}

// TestArchiveForwardsNetworkInfoToANode: network_info, which only a node
// answers, is forwarded to the upstream node, and its answer comes back
// as it gave it. The simulator said "no upstream node is configured"
// before, which the archive passed on as if it were its own.
func TestArchiveForwardsNetworkInfoToANode(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newEpochChain(t, ctx)
	archiveH := archiveHandler(t, c.st, c.vm, c.upstream)

	req := rpctest.Request("network_info", []any{})
	want, got := post(t, c.simH, req), post(t, archiveH, req)
	require.Equal(t, string(want), string(got))
	var resp near.Response
	require.NoError(t, json.Unmarshal(got, &resp))
	require.Nil(t, resp.Error, string(got))
	require.Contains(t, string(resp.Result), `"known_producers":[{"account_id":`)
}
