package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/store"
)

// splitRun is one backfill of heights 1..to split over parts indexers,
// each on its own cursor and range, run at once into one database.
type splitRun struct {
	parts   int
	blocks  int64
	seconds float64
}

// splitBackfillOnce backfills 1..to from the distant upstream through the
// RPC source with parts indexers on disjoint ranges of one archive.
func (e *benchEnv) splitBackfillOnce(ctx context.Context, parts int, to uint64) (splitRun, error) {
	dbURL, err := e.freshDatabase(ctx, "nearline_bench_split", true)
	if err != nil {
		return splitRun{}, err
	}
	stores := make([]*store.Store, parts)
	for i := range stores {
		st, err := store.Open(ctx, dbURL, store.Config{MaxConns: 8, Cursor: fmt.Sprintf("part-%d", i)}, e.logger)
		if err != nil {
			return splitRun{}, err
		}
		defer st.Close()
		stores[i] = st
	}
	if err := e.loadGenesis(ctx, stores[0]); err != nil {
		return splitRun{}, err
	}
	indexers := make([]*indexer.Indexer, parts)
	for i := range indexers {
		from, last := 1+uint64(i)*to/uint64(parts), uint64(i+1)*to/uint64(parts)
		src, err := e.newSource(sourceRPC, e.chain.distantURL, last, &fetchCounts{})
		if err != nil {
			return splitRun{}, err
		}
		indexers[i], err = indexer.New(indexer.Config{From: &from, To: &last, Workers: e.o.workers, BatchSize: e.o.batchSize,
			ProgressInterval: 10 * time.Second}, src, stores[i], e.logger)
		if err != nil {
			return splitRun{}, err
		}
	}
	began := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for _, ix := range indexers {
		g.Go(func() error { return ix.Run(gctx) })
	}
	if err := g.Wait(); err != nil {
		return splitRun{}, err
	}
	r := splitRun{parts: parts, seconds: since(began)}
	st, err := stores[0].Status(ctx)
	if err != nil {
		return splitRun{}, err
	}
	if len(st.Segments) != 1 || st.Gaps != 0 {
		return splitRun{}, fmt.Errorf("split backfill left segments %v, %d heights missing", st.Segments, st.Gaps)
	}
	r.blocks = st.Blocks
	return r, nil
}

// splitBackfill measures a backfill from the distant upstream split over
// two indexers against one indexer over the same heights, alternating.
func (e *benchEnv) splitBackfill(ctx context.Context) error {
	to := min(e.o.latencyBlocks, e.o.blocks)
	for i := range e.o.runs {
		for _, parts := range []int{1, 2} {
			r, err := e.splitBackfillOnce(ctx, parts, to)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "split run %d, %d indexer(s): %d blocks in %.1fs: %.2f blocks/s\n",
				i+1, parts, r.blocks, r.seconds, float64(r.blocks)/r.seconds)
			e.report.split = append(e.report.split, r)
		}
	}
	return nil
}

// printSplit prints the split backfill's row.
func (r *report) printSplit(w io.Writer, o options) {
	var one, two []splitRun
	for _, s := range r.split {
		if s.parts == 1 {
			one = append(one, s)
		} else {
			two = append(two, s)
		}
	}
	if len(one) == 0 || len(two) == 0 {
		return
	}
	rate := func(s splitRun) float64 { return float64(s.blocks) / s.seconds }
	a, b := medianBy(one, rate), medianBy(two, rate)
	fmt.Fprintf(w, "| split backfill from a distant upstream (%s latency, `--source rpc`), %d blocks, two indexers on two ranges of one archive | %.2f blocks/s | one indexer over the same heights: %.2f blocks/s | %.2f× | – |\n",
		o.latency, b.blocks, rate(b), rate(a), rate(b)/rate(a))
}
