package indexer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

// BenchmarkSimPipeline reports fetch and commit rates separately for a
// simulated chain: fetching every bundle (rpcsource.Source over HTTP), then
// committing them in batches of 50 into a fresh database.
func BenchmarkSimPipeline(b *testing.B) {
	const maxHeight = 300
	chain := simtest.New(b, sim.Config{Seed: 9, Shards: 4, SkipRate: 0.05, MissingChunkRate: 0.05, TxsPerBlock: 4, MaxHeight: maxHeight})
	client := chain.Client(b)
	src := simtest.NodeSource(b, client, rpcsource.Config{Waits: upstream.Waits{TxStallWait: time.Millisecond}})
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		fetchStart := time.Now()
		var bundles []bundle.Bundle
		rows := 0
		for h := uint64(1); h <= maxHeight-10; h++ {
			bundle, err := src.Bundle(ctx, h)
			if err != nil {
				continue
			}
			bundles = append(bundles, *bundle)
		}
		fetch := time.Since(fetchStart)
		s := storetest.NewStore(b)
		commitStart := time.Now()
		for lo := 0; lo < len(bundles); lo += 50 {
			stats, err := s.Commit(ctx, bundles[lo:min(lo+50, len(bundles))])
			require.NoError(b, err)
			rows += stats.Rows
		}
		commit := time.Since(commitStart)
		b.ReportMetric(float64(len(bundles))/fetch.Seconds(), "fetched_blocks/s_serial")
		b.ReportMetric(float64(len(bundles))/commit.Seconds(), "committed_blocks/s")
		b.ReportMetric(float64(rows)/commit.Seconds(), "committed_rows/s")
	}
}
