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
