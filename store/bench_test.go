package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/store/storetest"
)

// BenchmarkCommit measures committing batches of 50 fake blocks (3 shards).
func BenchmarkCommit(b *testing.B) {
	s := storetest.NewStore(b)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: uint64(50 * (b.N + 1)), Shards: 3})
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		var batch []bundle.Bundle
		for h := uint64(i*50 + 1); h <= uint64(i*50+50); h++ {
			bundle, _ := c.Bundle(h)
			batch = append(batch, bundle)
		}
		_, err := s.Commit(context.Background(), batch)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(50*b.N)/time.Since(start).Seconds(), "blocks/s")
}

// BenchmarkViewStateManyUpdates reads the whole state of a contract with 4
// keys each updated 25,000 times (10^5 history rows, as a busy mainnet
// contract's counters), at its latest height and half way. view_state's
// time is to grow with the keys, not with the updates.
func BenchmarkViewStateManyUpdates(b *testing.B) {
	const (
		keys    = 4
		updates = 25_000
	)
	s := storetest.NewStore(b)
	ctx := context.Background()
	_, err := s.Pool().Exec(ctx, `
INSERT INTO accounts (name) VALUES ('busy.near');
INSERT INTO contract_data_history_ids (account, data_key, block_height, deleted, value)
SELECT (SELECT id FROM accounts WHERE name = 'busy.near'), convert_to('key' || k, 'UTF8'), h * $1 + k, false, int8send(h)
FROM generate_series(1, $2::int) AS h, generate_series(0, $1 - 1) AS k`, keys, updates)
	require.NoError(b, err)
	_, err = s.Pool().Exec(ctx, `ANALYZE contract_data_history_ids`)
	require.NoError(b, err)
	for _, at := range []struct {
		name   string
		height uint64
	}{{"latest", keys*updates + keys}, {"half", keys * updates / 2}} {
		b.Run(at.name, func(b *testing.B) {
			for b.Loop() {
				items, err := s.ContractStateAt(ctx, "busy.near", nil, at.height, 0)
				require.NoError(b, err)
				require.Len(b, items, keys)
			}
		})
	}
}
