package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/nearline/nearline/bundle"
)

// tables are the tables Commit writes, family by family (each family's
// rows and COPY columns are defined together: rows.go, rows_chunk.go,
// rows_status.go, rows_state.go), then, when events are on,
// explorerTables.
var tables = slices.Concat(blockTables, chunkTables, statusTables, stateTables)

// commitLockID is the advisory lock a commit holds until it ends.
const commitLockID = 7_146_233_004

// Prepare makes bundles (ascending heights) into a Batch for Write: its
// rows, encoded without the database.
func (s *Store) Prepare(bundles []bundle.Bundle) (*bundle.Batch, error) {
	rows := newRowSet(s.codec)
	rows.events = s.events
	for i := range bundles {
		if i > 0 && bundles[i].Height() <= bundles[i-1].Height() {
			return nil, fmt.Errorf("prepare: heights not ascending: %d after %d", bundles[i].Height(), bundles[i-1].Height())
		}
		if err := rows.addBundle(&bundles[i]); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
		rows.addActivity(&bundles[i])
	}
	rows.packStatuses()
	rows.finishExplorer()
	rows.findBases()
	return &bundle.Batch{Bundles: bundles, Prepared: rows}, nil
}

// Commit writes bundles (ascending, contiguous heights) and moves the cursor
// to the last of them, all in one transaction: Prepare, then Write.
func (s *Store) Commit(ctx context.Context, bundles []bundle.Bundle) (bundle.CommitStats, error) {
	b, err := s.Prepare(bundles)
	if err != nil {
		return bundle.CommitStats{}, fmt.Errorf("commit: %w", err)
	}
	return s.Write(ctx, b)
}

// Write writes a prepared batch and moves the cursor to its last block, all
// in one transaction. Heights at or below the current cursor are
// rewritten, never duplicated. The cursor never moves backwards. Write
// leaves b as it was, so a failed Write can be retried with it.
func (s *Store) Write(ctx context.Context, b *bundle.Batch) (bundle.CommitStats, error) {
	bundles := b.Bundles
	if len(bundles) == 0 {
		return bundle.CommitStats{}, nil
	}
	rows, ok := b.Prepared.(*rowSet)
	if !ok {
		return bundle.CommitStats{}, errors.New("write: the batch was not made by Store.Prepare")
	}
	lo, hi := int64(bundles[0].Height()), int64(bundles[len(bundles)-1].Height())
	if err := s.EnsurePartitions(ctx, lowestHeight(bundles), uint64(hi)); err != nil {
		return bundle.CommitStats{}, fmt.Errorf("commit blocks %d-%d: %w", lo, hi, err)
	}
	if err := s.ensureLabels(ctx, rows.labels); err != nil {
		return bundle.CommitStats{}, fmt.Errorf("commit blocks %d-%d: %w", lo, hi, err)
	}
	last := bundles[len(bundles)-1].Block.Header
	covered := coveredFrom(bundles)
	stats := bundle.CommitStats{Blocks: len(bundles), Unknown: rows.unknown, MalformedEventLogs: len(rows.ex.malformed)}
	written := tables
	if s.events {
		written = append(tables[:len(tables):len(tables)], explorerTables...)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Commits take turns: a commit whose client gave up (a stopped
		// indexer) may still be finishing on the server when the next
		// one starts, and the next must see its blocks to rewrite them.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, commitLockID); err != nil {
			return fmt.Errorf("wait for other commits: %w", err)
		}
		if err := checkJoins(ctx, tx, covered, &bundles[0].Block.Header, &last); err != nil {
			return err
		}
		highest, found, err := highestBlock(ctx, tx)
		if err != nil {
			return err
		}
		ids, err := internTables(ctx, tx, written, rows)
		if err != nil {
			return err
		}
		rewrite := false
		if found && lo <= highest {
			if rewrite, err = storedIn(ctx, tx, lo, hi); err != nil {
				return err
			}
		}
		for _, t := range written {
			if spec := t.spec(); rewrite && spec.heightColumn != "" {
				q := fmt.Sprintf("DELETE FROM %s WHERE %s BETWEEN $1 AND $2", spec.name, spec.heightColumn)
				if _, err := tx.Exec(ctx, q, lo, hi); err != nil {
					return fmt.Errorf("clear %s %d-%d: %w", spec.name, lo, hi, err)
				}
			}
			n, err := copyRows(ctx, tx, t, rows, ids)
			if err != nil {
				return err
			}
			stats.Rows += n
		}
		if err := recordBases(ctx, tx, rows.bases, rows.remoteCandidates); err != nil {
			return fmt.Errorf("blocks %d-%d: %w", lo, hi, err)
		}
		cursor := bundle.Cursor{Height: last.Height, Hash: last.Hash}
		if err := setCursor(ctx, tx, s.cursor, covered, cursor); err != nil {
			return err
		}
		return notifyCommit(ctx, tx, s.cursor, lo, cursor)
	})
	if err != nil {
		return bundle.CommitStats{}, fmt.Errorf("commit blocks %d-%d: %w", lo, hi, err)
	}
	s.logMalformed(&rows.ex)
	return stats, nil
}

// lowestHeight is the lowest height a batch writes rows at: its first
// block, a skipped height below it, or an older chunk it repeats.
func lowestHeight(bundles []bundle.Bundle) uint64 {
	low := bundles[0].Height()
	for i := range bundles {
		for _, h := range bundles[i].Skipped {
			low = min(low, h)
		}
		for _, c := range bundles[i].OlderChunks {
			low = min(low, c.View.Header.HeightIncluded)
		}
	}
	return low
}

// coveredFrom is the lowest height a batch covers: the first of the
// heights skipped before its first block, or that block.
func coveredFrom(bundles []bundle.Bundle) uint64 {
	if skipped := bundles[0].Skipped; len(skipped) > 0 {
		return skipped[0]
	}
	return bundles[0].Height()
}

// highestBlock returns the highest stored block's height; found is false
// when there is none.
func highestBlock(ctx context.Context, tx pgx.Tx) (height int64, found bool, err error) {
	err = tx.QueryRow(ctx, `SELECT height FROM blocks ORDER BY height DESC LIMIT 1`).Scan(&height)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read highest block: %w", err)
	}
	return height, true, nil
}

// storedIn reports whether heights lo..hi may already be stored, so their
// rows are deleted before the batch's are written: a block, or a chunk (a
// missing chunk's, written by a range above) is there. Following the head,
// Write does not ask: lo is above the highest block.
func storedIn(ctx context.Context, tx pgx.Tx, lo, hi int64) (bool, error) {
	var stored bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blocks WHERE height BETWEEN $1 AND $2)
		OR EXISTS (SELECT 1 FROM chunks WHERE block_height BETWEEN $1 AND $2)`, lo, hi).Scan(&stored)
	if err != nil {
		return false, fmt.Errorf("look for stored heights %d-%d: %w", lo, hi, err)
	}
	return stored, nil
}

// copyRows writes rs's rows of t: one COPY, or, when t has a conflict
// clause and the COPY fails, through a staging table and that clause.
func copyRows(ctx context.Context, tx pgx.Tx, t table, rs *rowSet, ids accountIDs) (int, error) {
	rows, spec := t.of(rs), t.spec()
	if rows.len() == 0 {
		return 0, nil
	}
	if spec.conflict == "" {
		n, err := copyIn(ctx, tx, spec.name, spec.columns, rows, ids)
		if err != nil {
			return 0, fmt.Errorf("copy %s: %w", spec.name, err)
		}
		return int(n), nil
	}
	// Most batches conflict with nothing: try a plain COPY inside a
	// savepoint, and only when it fails load through a staging table with
	// the ON CONFLICT clause (large values are then written once, not
	// twice). Any failure takes the staging path, not only a unique
	// violation's SQLSTATE: a Citus coordinator reports a worker's as
	// XX000. An error that is not a conflict fails the staged load too,
	// and that error is returned.
	sp, err := tx.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("savepoint for %s: %w", spec.name, err)
	}
	n, err := copyIn(ctx, sp, spec.name, spec.columns, rows, ids)
	if err == nil {
		if err := sp.Commit(ctx); err != nil {
			return 0, fmt.Errorf("release savepoint for %s: %w", spec.name, err)
		}
		return int(n), nil
	}
	if rbErr := sp.Rollback(ctx); rbErr != nil {
		return 0, fmt.Errorf("copy %s: %w", spec.name, errors.Join(err, rbErr))
	}
	stage := "stage_" + spec.name
	if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE TEMP TABLE IF NOT EXISTS %s (LIKE %s INCLUDING DEFAULTS) ON COMMIT DELETE ROWS", stage, spec.name)); err != nil {
		return 0, fmt.Errorf("stage %s: %w", spec.name, err)
	}
	if _, err := tx.Exec(ctx, "TRUNCATE "+stage); err != nil {
		return 0, fmt.Errorf("truncate stage %s: %w", spec.name, err)
	}
	if _, err := copyIn(ctx, tx, stage, spec.columns, rows, ids); err != nil {
		return 0, fmt.Errorf("copy %s: %w", spec.name, err)
	}
	list := strings.Join(spec.columns, ", ")
	tag, err := tx.Exec(ctx, fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s %s", spec.name, list, list, stage, spec.conflict))
	if err != nil {
		return 0, fmt.Errorf("insert %s: %w", spec.name, err)
	}
	return int(tag.RowsAffected()), nil
}

// setCursorSQL advances a cursor, never backwards. A new cursor's range
// starts at the batch's lowest covered height; a range never grows down
// (the indexer refuses --from below it). The time is the inserted row's:
// Citus takes only immutable functions in DO UPDATE SET.
const setCursorSQL = `
INSERT INTO indexer_cursor (name, first_height, height, hash, updated_at) VALUES ($1, $2, $3, $4, now())
ON CONFLICT (name) DO UPDATE SET height = EXCLUDED.height, hash = EXCLUDED.hash, updated_at = EXCLUDED.updated_at
WHERE indexer_cursor.height <= EXCLUDED.height`

func setCursor(ctx context.Context, tx pgx.Tx, name string, first uint64, c bundle.Cursor) error {
	if _, err := tx.Exec(ctx, setCursorSQL, name, int64(first), int64(c.Height), c.Hash); err != nil {
		return fmt.Errorf("advance cursor %s to %d: %w", name, c.Height, err)
	}
	return nil
}

// Cursor returns the last block committed on the store's cursor
// (Config.Cursor); ok is false before its first commit.
func (s *Store) Cursor(ctx context.Context) (c bundle.Cursor, ok bool, err error) {
	var height int64
	err = s.pool.QueryRow(ctx, `SELECT height, hash FROM indexer_cursor WHERE name = $1`, s.cursor).Scan(&height, &c.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return bundle.Cursor{}, false, nil
	}
	if err != nil {
		return bundle.Cursor{}, false, fmt.Errorf("read cursor: %w", err)
	}
	c.Height = uint64(height)
	return c, true, nil
}

// BlockBefore returns the stored block with the greatest height below
// height; ok is false when there is none.
func (s *Store) BlockBefore(ctx context.Context, height uint64) (c bundle.Cursor, ok bool, err error) {
	var h int64
	err = s.pool.QueryRow(ctx, `SELECT height, hash FROM blocks WHERE height < $1 ORDER BY height DESC LIMIT 1`,
		int64(height)).Scan(&h, &c.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return bundle.Cursor{}, false, nil
	}
	if err != nil {
		return bundle.Cursor{}, false, fmt.Errorf("read block before %d: %w", height, err)
	}
	c.Height = uint64(h)
	return c, true, nil
}
