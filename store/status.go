package store

import (
	"context"
	"fmt"
	"time"

	"github.com/nearline/nearline/bundle"
)

// Status summarises the archive for `nearline status`.
type Status struct {
	// HasCursor is false before the first commit.
	HasCursor bool
	// Cursor is the newest committed block (of all cursors), updated at
	// CursorUpdated.
	Cursor        bundle.Cursor
	CursorUpdated time.Time
	// Ranges are the cursors' ranges, lowest first; Segments join those
	// that meet; UnindexedRuns are the heights between segments.
	Ranges         []bundle.Range
	Segments       []Segment
	UnindexedRuns  []Segment
	EarliestHeight uint64
	Blocks         int64
	SkippedHeights int64
	// Gaps counts heights between the earliest block and the newest that
	// are neither a block nor skipped: those of UnindexedRuns (a split
	// backfill still filling them), and any a failed manual re-index left.
	Gaps int64
}

// Status returns the archive's indexed ranges and counts.
func (s *Store) Status(ctx context.Context) (Status, error) {
	var st Status
	ranges, err := s.Ranges(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("read status: %w", err)
	}
	var earliest *int64
	err = s.pool.QueryRow(ctx, `SELECT (SELECT min(height) FROM blocks), (SELECT count(*) FROM blocks),
		(SELECT count(*) FROM skipped_heights)`).Scan(&earliest, &st.Blocks, &st.SkippedHeights)
	if err != nil {
		return Status{}, fmt.Errorf("read status: %w", err)
	}
	if len(ranges) == 0 {
		return st, nil
	}
	st.HasCursor = true
	st.Ranges, st.Segments = ranges, Segments(ranges)
	st.UnindexedRuns = Gaps(st.Segments)
	for _, r := range ranges {
		if r.Last.Height >= st.Cursor.Height {
			st.Cursor, st.CursorUpdated = r.Last, r.Updated
		}
	}
	if earliest != nil {
		st.EarliestHeight = uint64(*earliest)
		var inRange int64
		err := s.pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM blocks WHERE height <= $1) +
			(SELECT count(*) FROM skipped_heights WHERE height BETWEEN $2 AND $1)`, int64(st.Cursor.Height), *earliest).Scan(&inRange)
		if err != nil {
			return Status{}, fmt.Errorf("read status: %w", err)
		}
		st.Gaps = (int64(st.Cursor.Height) - *earliest + 1) - inRange
	}
	return st, nil
}
