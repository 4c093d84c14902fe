package sim

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSmokeProduce(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BlockTime, cfg.MaxHeight = 0, 1000
	start := time.Now()
	n, err := New(context.Background(), cfg)
	require.NoError(t, err)
	t.Logf("genesis in %s", time.Since(start))
	start = time.Now()
	require.NoError(t, n.ProduceTo(context.Background(), cfg.MaxHeight))
	t.Logf("2000 heights in %s, txs %d receipts %d", time.Since(start), len(n.chain.txs), len(n.chain.receipts))
	fails := 0
	for _, r := range n.chain.receipts {
		if r.executed && string(r.outcome.Outcome.Status[:10]) == `{"Failure"` {
			fails++
			if fails < 5 {
				t.Logf("failure: %s %s", r.view.ReceiverID, r.outcome.Outcome.Status)
			}
		}
	}
	t.Logf("failures %d", fails)
}
