package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestGlobalContractDistributionIsKeptAndTimed commits a chunk that carries
// a GlobalContractDistribution receipt (for shard 1) beside an action
// Nearline does not model: the distribution is recorded, its code kept,
// and it is not counted as unknown; the code is on shard 1 from the first
// chunk shard 1 has at or after the receipt's block (shard 1 misses its
// chunks at 8 and 9), and on no other shard.
func TestGlobalContractDistributionIsKeptAndTimed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	var receipts []near.ReceiptView
	require.NoError(t, json.Unmarshal([]byte(newerReceipts), &receipts))
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 12, Missing: func(h uint64, shard int) bool {
		return shard == 1 && (h == 8 || h == 9)
	}, Edit: func(b *bundle.Bundle) {
		if b.Height() != 8 {
			return
		}
		require.Equal(t, uint64(0), b.Chunks[0].View.Header.ShardID)
		b.Chunks[0].View.Receipts = append(b.Chunks[0].View.Receipts, receipts...)
		b.Chunks[0].JSON = nil // stored as encoded from the view
	}})
	commitRange(t, s, c, 1, 7, 0)
	stats := commitRange(t, s, c, 8, 8, 7)
	require.Equal(t, map[string]int{"action:TransferToGasKey": 1}, stats.Unknown,
		"a distribution receipt is modelled; the gas-key action is not")
	commitRange(t, s, c, 9, 12, 8)

	id := near.GlobalContractID{AccountID: "code.near"}
	for h, want := range map[uint64]bool{7: false, 8: false, 9: false, 10: true, 12: true} {
		code, hash, err := s.GlobalContractCodeAt(ctx, id, 1, h)
		if !want {
			require.ErrorIs(t, err, store.ErrNotFound, "height %d", h)
			continue
		}
		require.NoError(t, err, "height %d", h)
		require.Equal(t, []byte("\x00asm"), code)
		require.Equal(t, near.HashOf(code).String(), hash)
	}
	_, _, err := s.GlobalContractCodeAt(ctx, id, 0, 12)
	require.ErrorIs(t, err, store.ErrNotFound, "the receipt targets shard 1 only")
	_, _, err = s.GlobalContractCodeAt(ctx, near.GlobalContractID{CodeHash: near.HashOf([]byte("\x00asm")).String()}, 1, 12)
	require.ErrorIs(t, err, store.ErrNotFound, "deployed by account id, not by hash")
}
