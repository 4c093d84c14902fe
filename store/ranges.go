package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
)

// Ranges (migration 00010): every indexer_cursor row is one indexer's
// range. Every height from its First to its Last block is a stored block
// or a recorded skipped height. Several indexers (`nearline index --cursor
// NAME --from A --to B`) fill disjoint ranges of one archive; ranges that
// meet or overlap form a Segment. Write checks, under the commit lock,
// that a batch links to the ranges it meets (checkJoins), so the blocks of
// a segment always form one chain: whichever of two adjacent ranges commits
// its edge second makes the check.

// ErrContinuity is returned (wrapped) when a block does not link to the
// block before it: a fetched block to the last committed one, or the edge
// of a batch to the range it meets. Nothing of the batch is written.
var ErrContinuity = errors.New("chain continuity broken")

// DefaultCursor is the cursor of `nearline index` and `run` without
// --cursor.
const DefaultCursor = "main"

var cursorNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ValidCursorName reports whether name can name a cursor: 1 to 64 letters,
// digits, '_', '.' or '-'.
func ValidCursorName(name string) error {
	if !cursorNameRE.MatchString(name) {
		return fmt.Errorf("cursor name %q: want 1 to 64 letters, digits, '_', '.' or '-'", name)
	}
	return nil
}

// Segment is a run of heights covered by ranges that meet or overlap:
// inclusive First to Last.
type Segment struct{ First, Last uint64 }

// Ranges returns every cursor's range, lowest first.
func (s *Store) Ranges(ctx context.Context) ([]bundle.Range, error) {
	return readRanges(ctx, s.pool)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func readRanges(ctx context.Context, q querier) ([]bundle.Range, error) {
	rows, err := q.Query(ctx, `SELECT name, first_height, height, hash, updated_at FROM indexer_cursor ORDER BY first_height, name`)
	if err != nil {
		return nil, fmt.Errorf("read ranges: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (bundle.Range, error) {
		var r bundle.Range
		var first, height int64
		err := row.Scan(&r.Cursor, &first, &height, &r.Last.Hash, &r.Updated)
		r.First, r.Last.Height = uint64(first), uint64(height)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read ranges: %w", err)
	}
	return out, nil
}

// Segments joins ranges that meet or overlap, lowest first.
func Segments(ranges []bundle.Range) []Segment {
	sorted := slices.Clone(ranges)
	slices.SortFunc(sorted, func(a, b bundle.Range) int { return cmp.Compare(a.First, b.First) })
	var out []Segment
	for _, r := range sorted {
		if n := len(out); n > 0 && r.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, r.Last.Height)
			continue
		}
		out = append(out, Segment{First: r.First, Last: r.Last.Height})
	}
	return out
}

// Gaps returns the runs of heights between segments: not indexed yet.
func Gaps(segments []Segment) []Segment {
	var out []Segment
	for i := 1; i < len(segments); i++ {
		out = append(out, Segment{First: segments[i-1].Last + 1, Last: segments[i].First - 1})
	}
	return out
}

// SegmentOf returns the run of segments (segments, or the Gaps between
// them) holding height; ok is false when none does.
func SegmentOf(segments []Segment, height uint64) (seg Segment, ok bool) {
	for _, s := range segments {
		if s.First <= height && height <= s.Last {
			return s, true
		}
	}
	return Segment{}, false
}

// Range returns the range of the store's cursor (Config.Cursor); ok is
// false before its first commit.
func (s *Store) Range(ctx context.Context) (r bundle.Range, ok bool, err error) {
	ranges, err := s.Ranges(ctx)
	if err != nil {
		return bundle.Range{}, false, err
	}
	for _, r := range ranges {
		if r.Cursor == s.cursor {
			return r, true, nil
		}
	}
	return bundle.Range{}, false, nil
}

// LinkBelow returns where heights from start on join the range below: the
// greatest stored block below start, when one range covers both it and
// start-1. ok is false when start begins a range: no range covers start-1,
// or the one that does has no block below start (it begins with skipped
// heights).
func (s *Store) LinkBelow(ctx context.Context, start uint64) (l bundle.Link, ok bool, err error) {
	if start == 0 {
		return bundle.Link{}, false, nil
	}
	ranges, err := s.Ranges(ctx)
	if err != nil {
		return bundle.Link{}, false, err
	}
	before, ok, err := s.BlockBefore(ctx, start)
	if err != nil || !ok {
		return bundle.Link{}, false, err
	}
	for _, r := range ranges {
		if r.Covers(start-1) && r.Covers(before.Height) {
			return bundle.Link{Block: before, RangeFirst: r.First}, true, nil
		}
	}
	return bundle.Link{}, false, nil
}

// RangeAbove returns the lowest First of the ranges of other cursors that
// cover height or start above it: where an indexer starting at height meets
// another one's range. ok is false when there is none.
func (s *Store) RangeAbove(ctx context.Context, height uint64) (r bundle.Range, ok bool, err error) {
	ranges, err := s.Ranges(ctx)
	if err != nil {
		return bundle.Range{}, false, err
	}
	for _, x := range ranges {
		if x.Cursor == s.cursor || x.Last.Height < height {
			continue
		}
		if !ok || x.First < r.First {
			r, ok = x, true
		}
	}
	return r, ok, nil
}

// checkJoins checks, inside a commit holding the commit lock, that the
// batch (lowest covered height low, blocks first..last) links to the
// ranges it meets: its first block to the block below low when a range
// covers low-1 and that block, and the first block above its last to its
// last block when a range covers last+1 and that block.
func checkJoins(ctx context.Context, tx pgx.Tx, low uint64, first, last *near.BlockHeaderView) error {
	ranges, err := readRanges(ctx, tx)
	if err != nil {
		return err
	}
	covered := func(hs ...uint64) bool {
		for _, r := range ranges {
			ok := true
			for _, h := range hs {
				ok = ok && r.Covers(h)
			}
			if ok {
				return true
			}
		}
		return false
	}
	if low > 0 && covered(low-1) {
		var h int64
		var hash string
		err := tx.QueryRow(ctx, `SELECT height, hash FROM blocks WHERE height < $1 ORDER BY height DESC LIMIT 1`, int64(low)).Scan(&h, &hash)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("read block below %d: %w", low, err)
		case covered(low-1, uint64(h)) && (first.PrevHash != hash || (first.PrevHeight != nil && *first.PrevHeight != uint64(h))):
			return fmt.Errorf("%w at height %d: block %s has prev_hash %s, but the range below ends with block %s at height %d",
				ErrContinuity, first.Height, first.Hash, first.PrevHash, hash, h)
		}
	}
	if !covered(last.Height + 1) {
		return nil
	}
	var h int64
	var hash, prevHash string
	var prevHeight *int64
	err = tx.QueryRow(ctx, `SELECT height, hash, prev_hash, prev_height FROM blocks WHERE height > $1 ORDER BY height LIMIT 1`,
		int64(last.Height)).Scan(&h, &hash, &prevHash, &prevHeight)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("read block above %d: %w", last.Height, err)
	}
	if !covered(last.Height+1, uint64(h)) {
		return nil
	}
	if prevHash != last.Hash || (prevHeight != nil && *prevHeight != int64(last.Height)) {
		return fmt.Errorf("%w at height %d: block %s of the range above has prev_hash %s, but this batch ends with block %s at height %d",
			ErrContinuity, h, hash, prevHash, last.Hash, last.Height)
	}
	return nil
}
