package archive

import (
	"context"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/store"
)

// Split backfills. Several indexers may fill disjoint ranges of heights
// (bundle.Range); ranges that meet form a segment. A block stored in any
// range is answered; a height between segments is not indexed yet
// (gapError). State at a height is complete only when the segment holding
// it reaches down to the start of state history: the value of an account
// at H is its newest row at or below H, and a range below H that is not in
// yet may hold a newer one (stateDecided).

// segments returns the indexed segments: the cached ones unless fresh.
// Ranges only grow, so a cached read can only say "not indexed" or "not
// complete" wrongly, and callers read again before answering that.
func (a *Backend) segments(ctx context.Context, fresh bool) ([]store.Segment, error) {
	a.mu.Lock()
	segs := a.segs
	a.mu.Unlock()
	if segs != nil && !fresh {
		return segs, nil
	}
	ranges, err := a.store.Ranges(ctx)
	if err != nil {
		return nil, fmt.Errorf("read indexed ranges: %w", err)
	}
	segs = store.Segments(ranges)
	a.mu.Lock()
	a.segs = segs
	a.mu.Unlock()
	return segs, nil
}

// stateDecided reports whether the state at height is complete from start
// (the start of state history): the segment holding height reaches down
// to start. When it is not, missing is the run of heights below height
// that is not indexed yet.
func (a *Backend) stateDecided(ctx context.Context, height, start uint64) (ok bool, missing store.Segment, err error) {
	decided := func(segs []store.Segment) bool {
		seg, in := store.SegmentOf(segs, height)
		return in && seg.First <= start
	}
	segs, err := a.segments(ctx, false)
	if err == nil && !decided(segs) {
		segs, err = a.segments(ctx, true)
	}
	if err != nil {
		return false, store.Segment{}, err
	}
	if decided(segs) {
		return true, store.Segment{}, nil
	}
	return false, unindexedBelow(segs, height, start), nil
}

// unindexedBelow returns the highest run of heights from start up to the
// segment holding height (or up to height) that no segment covers.
func unindexedBelow(segs []store.Segment, height, start uint64) store.Segment {
	top := height
	if seg, in := store.SegmentOf(segs, height); in {
		top = seg.First - 1
	}
	run := store.Segment{First: start, Last: top}
	for _, s := range segs {
		if s.Last < top && s.Last+1 > run.First {
			run.First = s.Last + 1
		}
	}
	return run
}

// gapError is the reason a height the archive has not indexed (between its
// ranges) cannot be answered, or nil when no run between ranges holds
// height (a range covers it: the chain skipped it).
func (a *Backend) gapError(ctx context.Context, height uint64) (*rpcserve.ForwardError, error) {
	segs, err := a.segments(ctx, true)
	if err != nil {
		return nil, err
	}
	g, in := store.SegmentOf(store.Gaps(segs), height)
	if !in {
		return nil, nil
	}
	return &rpcserve.ForwardError{Reason: near.HandlerError("UNKNOWN_BLOCK", nil, fmt.Sprintf(
		"Block #%d is in heights #%d-#%d, which this archive has not indexed yet, and no upstream node is configured to forward to",
		height, g.First, g.Last))}, nil
}

// stateNotDecided is the reason a query at a height whose state is not
// complete yet cannot be answered.
func stateNotDecided(height uint64, missing store.Segment) *near.Error {
	return near.HandlerError("UNKNOWN_BLOCK", nil, fmt.Sprintf(
		"The state at block #%d is not complete in this archive yet: heights #%d-#%d below it are not indexed, and no upstream node is configured to forward to",
		height, missing.First, missing.Last))
}
