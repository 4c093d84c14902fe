package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSmokeProduce produces 1,000 heights of the default chain and checks
// that it is a chain worth indexing: every height up to the last is a block
// or a recorded skip, blocks link to the block before, traffic flows
// (transactions and receipts), and most receipts succeed while some fail
// (both kinds of outcome are exercised).
func TestSmokeProduce(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.BlockTime, cfg.MaxHeight = 0, 1000
	n := newNode(t, cfg)
	require.NoError(t, n.ProduceTo(context.Background(), cfg.MaxHeight))

	c := n.chain
	require.NotEmpty(t, c.blocks)
	last := c.blocks[len(c.blocks)-1]
	for h := last.view.Header.Height + 1; h <= cfg.MaxHeight; h++ {
		require.True(t, c.skipped[h], "height %d, above the last block and up to the last height, is a skip", h)
	}
	for h := c.blocks[0].view.Header.Height; h <= last.view.Header.Height; h++ {
		_, isBlock := c.byHeight[h]
		require.True(t, isBlock != c.skipped[h], "height %d is a block or a skip, exactly one", h)
	}
	for i := 1; i < len(c.blocks); i++ {
		require.Equal(t, c.blocks[i-1].view.Header.Hash, c.blocks[i].view.Header.PrevHash, "block %d links to the one before", c.blocks[i].view.Header.Height)
	}

	require.Greater(t, len(c.txs), 1000, "transactions flow")
	require.Greater(t, len(c.receipts), len(c.txs), "transactions lead to receipts")
	executed, failed := 0, 0
	for _, r := range c.receipts {
		if !r.executed {
			continue
		}
		executed++
		if strings.HasPrefix(string(r.outcome.Outcome.Status), `{"Failure"`) {
			failed++
		}
	}
	t.Logf("blocks %d, txs %d, receipts %d (%d executed, %d failed)", len(c.blocks), len(c.txs), len(c.receipts), executed, failed)
	require.Positive(t, failed, "some receipts fail")
	require.Less(t, failed*5, executed, "most receipts succeed")
}
