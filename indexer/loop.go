package indexer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/bundle"
)

// fetched is one height's fetch result: its bundle, or nil when the upstream
// has no block there.
type fetched struct {
	height uint64
	bundle *bundle.Bundle
	weight int64 // bundleWeight, held in the budget until written
}

// batch is a run of consecutive heights, fetched together, and the bytes
// of the budget it holds.
type batch struct {
	results []fetched
	weight  int64
}

// Run follows the chain until ctx ends (returning nil: the batch in hand is
// committed or rolled back, never half-written) or, with Config.To, until To
// is committed. It returns an error wrapping ErrContinuity when a block does
// not link to the last committed one, after committing everything before it.
func (ix *Indexer) Run(ctx context.Context) error {
	err := ix.run(ctx)
	if err != nil && ctx.Err() != nil {
		ix.logger.Info("indexer stopped", "reason", ctx.Err())
		return nil
	}
	return err
}

func (ix *Indexer) run(ctx context.Context) error {
	var genesis json.RawMessage
	err := ix.callUpstream(ctx, "genesis_config", func(ctx context.Context) (err error) {
		genesis, err = ix.src.GenesisConfig(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("fetch genesis config: %w", err)
	}
	if err := ix.retryDB(ctx, "store genesis config", func() error { return ix.sink.PutGenesisConfig(ctx, genesis) }); err != nil {
		return err
	}
	p, err := ix.plan(ctx, genesis)
	if err != nil {
		return err
	}
	if p.done != "" {
		ix.logger.Info(p.done)
		return nil
	}
	start, prev := p.start, p.prev
	ix.src.Prepare(p.floor)
	attrs := []any{"from", start, "workers", ix.cfg.Workers, "batch_size", ix.cfg.BatchSize, "memory_budget_mib", ix.cfg.MemoryBudget >> 20}
	if ix.cfg.To != nil {
		attrs = append(attrs, "to", *ix.cfg.To)
	}
	if prev != nil {
		attrs = append(attrs, "after_height", prev.Height, "after_hash", prev.Hash)
	}
	ix.logger.Info("indexer starting", attrs...)
	prog := newProgress(start, ix.cfg.To)
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan batch, 1)
	g.Go(func() error {
		defer close(batches)
		return ix.produce(gctx, start, prev != nil, batches, prog)
	})
	linked := make(chan linkedBatch, 1)
	g.Go(func() error {
		defer close(linked)
		return ix.link(gctx, start, prev, batches, linked)
	})
	g.Go(func() error { return ix.consume(gctx, linked, prog) })
	reportCtx, stopReport := context.WithCancel(gctx)
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		ix.report(reportCtx, prog)
	}()
	err = g.Wait()
	stopReport()
	<-reported
	ix.logProgress(prog)
	ix.logger.Info("stage wall time per block", ix.stages.attrs()...)
	return err
}

// plan is where a run starts.
type plan struct {
	start uint64
	// prev is the block the first block must link to; nil when start
	// begins a range.
	prev *bundle.Cursor
	// floor is the lowest height the run's range reaches down to (start,
	// or the first height of the range below it that it joins): a block
	// repeating a chunk included below it carries that chunk.
	floor uint64
	// done, when set, says why there is nothing to index.
	done string
}

// plan decides the first height to fetch, the block it must link to and
// whether the run has anything to do.
func (ix *Indexer) plan(ctx context.Context, genesis []byte) (plan, error) {
	var own bundle.Range
	var ok bool
	err := ix.retryDB(ctx, "read cursor", func() (err error) {
		own, ok, err = ix.sink.Range(ctx)
		return err
	})
	if err != nil {
		return plan{}, err
	}
	var start uint64
	switch {
	case ix.cfg.From != nil:
		start = *ix.cfg.From
		if ok && start > own.Last.Height+1 {
			return plan{}, fmt.Errorf("--from %d would leave heights %d-%d unindexed after the cursor at %d",
				start, own.Last.Height+1, start-1, own.Last.Height)
		}
		if ok && start < own.First {
			return plan{}, fmt.Errorf("--from %d is below the cursor's range %d-%d: index heights below a range on a cursor of their own (--cursor NAME --to %d)",
				start, own.First, own.Last.Height, own.First-1)
		}
	case ok:
		start = own.Last.Height + 1
	default:
		other, others, err := ix.rangeAbove(ctx, 0)
		if err != nil {
			return plan{}, err
		}
		if others {
			return plan{}, fmt.Errorf("the cursor is new and the archive holds other ranges (cursor %s: %d-%d): give --from", other.Cursor, other.First, other.Last.Height)
		}
		h, err := genesisHeight(genesis)
		if err != nil {
			return plan{}, fmt.Errorf("empty archive and no --from: %w", err)
		}
		start = h
	}
	var link bundle.Link
	var linked bool
	err = ix.retryDB(ctx, "read the range below", func() (err error) {
		link, linked, err = ix.sink.LinkBelow(ctx, start)
		return err
	})
	if err != nil {
		return plan{}, err
	}
	p := plan{start: start, floor: start}
	if linked {
		p.prev, p.floor = &link.Block, min(start, link.RangeFirst)
	}
	if to := ix.cfg.To; to != nil && p.prev != nil && p.prev.Height >= *to {
		p.done = fmt.Sprintf("already indexed up to --to %d (height %d)", *to, p.prev.Height)
		return p, nil
	}
	if other, ok, err := ix.rangeAbove(ctx, start); err != nil {
		return plan{}, err
	} else if ok && other.First <= start {
		p.done = fmt.Sprintf("heights from %d are in the range of cursor %s (%d-%d): nothing to index", start, other.Cursor, other.First, other.Last.Height)
	}
	return p, nil
}

// rangeAbove returns the lowest range of another cursor that covers height
// or starts above it.
func (ix *Indexer) rangeAbove(ctx context.Context, height uint64) (r bundle.Range, ok bool, err error) {
	err = ix.retryDB(ctx, "read ranges", func() (err error) {
		r, ok, err = ix.sink.RangeAbove(ctx, height)
		return err
	})
	return r, ok, err
}

// lastHeight is the last height to fetch from next on: Config.To, or the
// height below the next range of another cursor, whichever is lower; nil
// when neither bounds the run. met names the range when it is the bound.
func (ix *Indexer) lastHeight(ctx context.Context, next uint64) (to *uint64, met *bundle.Range, err error) {
	to = ix.cfg.To
	other, ok, err := ix.rangeAbove(ctx, next)
	if err != nil || !ok || other.First == 0 {
		return to, nil, err
	}
	if below := other.First - 1; to == nil || below < *to {
		return &below, &other, nil
	}
	return to, nil, nil
}

// produce fetches batches of consecutive heights up to the final head and
// hands them over in order; linked says that the height below start is in
// the archive.
func (ix *Indexer) produce(ctx context.Context, start uint64, linked bool, out chan<- batch, prog *progress) error {
	next := start
	var head uint64
	var headAt time.Time
	var lastBlock uint64
	seenBlock := false
	for {
		to, met, err := ix.lastHeight(ctx, next)
		if err != nil {
			return err
		}
		if to != nil && seenBlock && lastBlock >= *to {
			if met != nil {
				ix.logger.Info("range meets the range of another cursor", "cursor", met.Cursor,
					"its_first_height", met.First, "last_block", lastBlock)
			}
			return nil
		}
		if next > head || ix.headStale(next, head, headAt) {
			h, err := ix.waitHead(ctx, next, linked || next > start)
			if err != nil {
				return err
			}
			head, headAt = h, time.Now()
			prog.setHead(head)
			ix.cfg.Metrics.setHead(head)
		}
		hi := min(next+uint64(ix.cfg.BatchSize)-1, head)
		if to != nil {
			if next <= *to {
				hi = min(hi, *to)
			} else {
				// To was skipped: fetch on, one height at a time, until a
				// block links over it.
				hi = next
			}
		}
		began := time.Now()
		b, err := ix.fetchRange(ctx, next, hi)
		if err != nil {
			return err
		}
		ix.stages.add(&ix.stages.fetch, began)
		for _, r := range b.results {
			if r.bundle != nil {
				lastBlock, seenBlock = r.height, true
			}
		}
		began = time.Now()
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		ix.stages.add(&ix.stages.fetchBlocked, began)
		next = b.results[len(b.results)-1].height + 1
	}
}

// farHeadRefresh is how often the final head is read again while the
// heights in hand are more than a batch below it: only the lag metric and
// progress line use it then, and each read is an upstream request (with
// block documents, one more per batch: 2% of a backfill's requests).
const farHeadRefresh = 30 * time.Second

// headStale reports whether the head read at headAt is worth reading
// again before fetching from next: every PollInterval within a batch of
// it (a fresher head makes a fuller batch), every farHeadRefresh below.
func (ix *Indexer) headStale(next, head uint64, headAt time.Time) bool {
	age := time.Since(headAt)
	if head-next < uint64(ix.cfg.BatchSize) {
		return age >= ix.cfg.PollInterval
	}
	return age >= max(farHeadRefresh, ix.cfg.PollInterval)
}

// waitHead returns the final head once it reaches at least height, polling
// every PollInterval. When the height below is in the archive (indexed) and
// the head is below it too (an upstream restarted from an older state, or
// one that is behind), it says so once, and again when the head is back.
func (ix *Indexer) waitHead(ctx context.Context, height uint64, indexed bool) (uint64, error) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	below := false
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-timer.C:
		}
		var head uint64
		err := ix.callUpstream(ctx, "final head", func(ctx context.Context) (err error) {
			head, err = ix.src.FinalHead(ctx)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("fetch final head: %w", err)
		}
		if head >= height {
			if below {
				ix.logger.Info("upstream head is back at the archive's cursor; resuming", "head", head, "cursor", height-1)
			}
			return head, nil
		}
		if indexed && head+1 < height && !below {
			below = true
			ix.logger.Warn(fmt.Sprintf("upstream head %d is below the archive's cursor %d; waiting", head, height-1),
				"head", head, "cursor", height-1)
		}
		timer.Reset(ix.cfg.PollInterval)
	}
}

// fetchRange fetches heights from lo on, up to hi, with at most Workers at
// once, as far as the memory budget allows: the first height waits for
// room; a later one waits while fetches of the batch are running (they
// settle to their blocks' weight), and ends the batch when none is and
// there is still no room, or once the batch holds its share of the budget
// (its blocks' weight and its running fetches' reservations: counting
// only settled blocks, a batch reserved the whole budget before its first
// fetch settled, and the next batch waited for its write), so that what
// is in hand moves on and is released, and the next batch is fetched
// while this one is prepared and written.
func (ix *Indexer) fetchRange(ctx context.Context, lo, hi uint64) (batch, error) {
	// results is never grown past its capacity: the fetches write through
	// pointers into it.
	results := make([]fetched, 0, hi-lo+1)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(ix.cfg.Workers)
	// held is what the batch holds of the budget: its settled blocks'
	// weight and its running fetches' reservations.
	var running, held atomic.Int64
	err := func() error {
		for height := lo; height <= hi; height++ {
			if len(results) > 0 && held.Load() >= ix.budget.batchShare() {
				return nil
			}
			reserved, ok, err := ix.reserve(gctx, len(results) == 0, &running)
			if err != nil || !ok {
				return err
			}
			results = append(results, fetched{height: height})
			r := &results[len(results)-1]
			running.Add(1)
			held.Add(reserved)
			g.Go(func() error {
				var b *bundle.Bundle
				err := ix.callUpstream(gctx, "fetch block", func(ctx context.Context) (err error) {
					b, err = ix.src.Bundle(ctx, height)
					return err
				})
				switch {
				case errors.Is(err, bundle.ErrNoBlock):
					err = nil // a height without a block
				case err != nil:
					err = fmt.Errorf("fetch height %d: %w", height, err)
				case b.Height() != height:
					err = fmt.Errorf("fetch height %d: upstream returned block %d", height, b.Height())
				default:
					r.bundle, r.weight = b, bundleWeight(b)
				}
				held.Add(r.weight - reserved)
				running.Add(-1) // before settle wakes a reserve that looks at it
				ix.budget.settle(reserved, r.weight)
				return err
			})
		}
		return nil
	}()
	err = cmp.Or(g.Wait(), err)
	b := batch{results: results}
	for _, r := range results {
		b.weight += r.weight
	}
	if err != nil {
		ix.budget.release(b.weight)
		return batch{}, err
	}
	return b, nil
}

// reserve takes a fetch's room in the budget: waiting for it when first
// (the batch's first height) or while fetches of the batch are running;
// ok is false when neither holds and there is no room.
func (ix *Indexer) reserve(ctx context.Context, first bool, running *atomic.Int64) (int64, bool, error) {
	for {
		n, ok, freed := ix.budget.tryReserve()
		if ok {
			return n, true, nil
		}
		if !first && running.Load() == 0 {
			return 0, false, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-freed:
		}
	}
}

// linkedBatch is a batch's blocks that follow the last one linked before
// them, prepared for the sink (nil when none did), and the continuity
// error that ended the batch, if one did (the blocks before it are still
// written).
type linkedBatch struct {
	batch   *bundle.Batch
	linkErr error
	weight  int64 // the budget's bytes the batch holds
}

// link checks each block's link to the one before it (the last committed
// block first), records the heights skipped between them, and prepares
// each batch for the sink while consume writes the one before. It stops
// after the batch that broke continuity.
func (ix *Indexer) link(ctx context.Context, start uint64, prev *bundle.Cursor, in <-chan batch, out chan<- linkedBatch) error {
	for b := range in {
		began := time.Now()
		var bundles []bundle.Bundle
		var linkErr error
		for _, r := range b.results {
			if r.bundle == nil {
				continue
			}
			skipped, err := linkTo(prev, start, r.bundle)
			if err != nil {
				linkErr = err
				break
			}
			r.bundle.Skipped = skipped
			bundles = append(bundles, *r.bundle)
			hdr := r.bundle.Block.Header
			prev = &bundle.Cursor{Height: hdr.Height, Hash: hdr.Hash}
		}
		l := linkedBatch{linkErr: linkErr, weight: b.weight}
		if len(bundles) > 0 {
			prepared, err := ix.sink.Prepare(bundles)
			if err != nil {
				return fmt.Errorf("prepare heights %d-%d: %w", bundles[0].Height(), prev.Height, err)
			}
			l.batch = prepared
		}
		ix.stages.add(&ix.stages.prepare, began)
		began = time.Now()
		select {
		case out <- l:
		case <-ctx.Done():
			return ctx.Err()
		}
		ix.stages.add(&ix.stages.prepBlocked, began)
		if linkErr != nil {
			return nil // consume returns it once the blocks before it are written
		}
	}
	return nil
}

// consume writes each prepared batch in one transaction, in order.
func (ix *Indexer) consume(ctx context.Context, in <-chan linkedBatch, prog *progress) error {
	lastRevisit := time.Now()
	idle := time.Now()
	for l := range in {
		ix.stages.add(&ix.stages.writeIdle, idle)
		if l.batch != nil {
			last := l.batch.Bundles[len(l.batch.Bundles)-1].Height()
			began := time.Now()
			var stats bundle.CommitStats
			err := ix.retryDB(ctx, "commit", func() (err error) {
				stats, err = ix.sink.Write(ctx, l.batch)
				return err
			})
			if err != nil {
				return err
			}
			ix.budget.release(l.weight)
			l.weight = 0
			for _, b := range l.batch.Bundles {
				if b.Release != nil {
					b.Release()
				}
			}
			ix.cfg.Metrics.committed(stats, last, time.Since(began))
			ix.stages.add(&ix.stages.write, began)
			ix.stages.blocks.Add(int64(stats.Blocks))
			ix.noteUnknown(stats.Unknown, last)
			prog.committed(last, stats.Blocks, stats.Rows)
			if time.Since(lastRevisit) >= ix.cfg.RevisitInterval {
				lastRevisit = time.Now()
				if err := ix.retryDB(ctx, "revisit tx statuses", func() error { return ix.revisitTxStatuses(ctx, last) }); err != nil {
					return err
				}
			}
		}
		ix.budget.release(l.weight)
		if l.linkErr != nil {
			return l.linkErr
		}
		idle = time.Now()
	}
	return ctx.Err()
}

// linkTo checks that bundle follows prev (or, with no prev, that nothing
// from start on was skipped over wrongly) and returns the heights between
// them, which the chain skipped.
func linkTo(prev *bundle.Cursor, start uint64, b *bundle.Bundle) ([]uint64, error) {
	hdr := b.Block.Header
	prevHeight := "none"
	if hdr.PrevHeight != nil {
		prevHeight = fmt.Sprint(*hdr.PrevHeight)
	}
	from := start
	if prev != nil {
		if hdr.PrevHash != prev.Hash || (hdr.PrevHeight != nil && *hdr.PrevHeight != prev.Height) {
			return nil, fmt.Errorf("%w at height %d: block %s has prev_hash %s (prev_height %s), but the last committed block is %s at height %d",
				ErrContinuity, hdr.Height, hdr.Hash, hdr.PrevHash, prevHeight, prev.Hash, prev.Height)
		}
		from = prev.Height + 1
	} else if hdr.PrevHeight != nil && *hdr.PrevHeight >= start && *hdr.PrevHeight < hdr.Height {
		return nil, fmt.Errorf("%w at height %d: block %s has prev_hash %s at height %s, which the upstream reported as missing",
			ErrContinuity, hdr.Height, hdr.Hash, hdr.PrevHash, prevHeight)
	}
	if hdr.Height < from {
		return nil, fmt.Errorf("%w at height %d: block %s is not above the last committed block", ErrContinuity, hdr.Height, hdr.Hash)
	}
	var skipped []uint64
	for h := from; h < hdr.Height; h++ {
		skipped = append(skipped, h)
	}
	return skipped, nil
}

// noteUnknown logs, once per kind and Indexer, that a batch held something
// Nearline stores as served but does not model (the metric counts every one).
func (ix *Indexer) noteUnknown(unknown map[string]int, height uint64) {
	for kind := range unknown {
		if ix.unknownSeen[kind] {
			continue
		}
		ix.unknownSeen[kind] = true
		ix.logger.Warn("stored a variant Nearline does not model, as the upstream served it", "kind", kind, "height", height)
	}
}

// genesisHeight reads genesis_height from a genesis_config result.
func genesisHeight(genesis json.RawMessage) (uint64, error) {
	var cfg struct {
		GenesisHeight *uint64 `json:"genesis_height"`
	}
	if err := json.Unmarshal(genesis, &cfg); err != nil || cfg.GenesisHeight == nil {
		return 0, errors.New("genesis config has no genesis_height")
	}
	return *cfg.GenesisHeight, nil
}
