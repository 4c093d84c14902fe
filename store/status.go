package store

import (
	"context"
	"fmt"
	"time"
)

// Status summarises the archive for `nearline status`.
type Status struct {
	HasCursor      bool
	Cursor         Cursor
	CursorUpdated  time.Time
	EarliestHeight uint64
	Blocks         int64
	SkippedHeights int64
	// Gaps counts heights between the earliest block and the cursor that
	// are neither a block nor skipped (only after a failed manual
	// re-index; zero in normal operation).
	Gaps int64
}

// Status returns the archive's indexed range and cursor.
func (s *Store) Status(ctx context.Context) (Status, error) {
	var st Status
	var height, earliest *int64
	var hash *string
	var updated *time.Time
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT height FROM indexer_cursor WHERE name = $1),
		(SELECT hash FROM indexer_cursor WHERE name = $1),
		(SELECT updated_at FROM indexer_cursor WHERE name = $1),
		(SELECT min(height) FROM blocks),
		(SELECT count(*) FROM blocks),
		(SELECT count(*) FROM skipped_heights)`, cursorName).Scan(&height, &hash, &updated, &earliest, &st.Blocks, &st.SkippedHeights)
	if err != nil {
		return Status{}, fmt.Errorf("read status: %w", err)
	}
	if height == nil {
		return st, nil
	}
	st.HasCursor = true
	st.Cursor = Cursor{Height: uint64(*height), Hash: *hash}
	st.CursorUpdated = *updated
	if earliest != nil {
		st.EarliestHeight = uint64(*earliest)
		var inRange int64
		err := s.pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM blocks WHERE height <= $1) +
			(SELECT count(*) FROM skipped_heights WHERE height BETWEEN $2 AND $1)`, *height, *earliest).Scan(&inRange)
		if err != nil {
			return Status{}, fmt.Errorf("read status: %w", err)
		}
		st.Gaps = (*height - *earliest + 1) - inRange
	}
	return st, nil
}
