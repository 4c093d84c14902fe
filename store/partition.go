package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

// partitionedTables are the block-keyed tables, range-partitioned by height
// (migration 00007).
var partitionedTables = []string{"blocks", "skipped_heights", "block_chunks", "chunks", "transactions", "receipts",
	"actions", "execution_outcomes", "transaction_statuses", "state_changes", "block_effects", "block_changes",
	"block_tx_statuses"}

// partitionLockID is the advisory lock held while creating partitions, so
// that two writers do not race on the same one.
const partitionLockID = 7_146_233_003

// partitions remembers the partition ranges known to exist.
type partitions struct {
	mu    sync.Mutex
	size  int64 // heights per partition; 0 until read
	ready map[int64]bool
}

// PartitionName returns the name of table's partition holding height, for a
// partition size.
func PartitionName(table string, height, size int64) string {
	return fmt.Sprintf("%s_h%012d", table, height-height%size)
}

// EnsurePartitions creates, for every block-keyed table, the partitions
// holding heights lo to hi and the one after (so a writer is a range
// ahead). Each runs in its own short transaction, never inside a commit:
// creating a partition locks its parent table.
func (s *Store) EnsurePartitions(ctx context.Context, lo, hi uint64) error {
	p := &s.partitions
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.size == 0 {
		if err := s.pool.QueryRow(ctx, `SELECT size FROM height_partitioning`).Scan(&p.size); err != nil {
			return fmt.Errorf("read partition size: %w", err)
		}
		p.ready = map[int64]bool{}
	}
	first := int64(lo) - int64(lo)%p.size
	for start := first; start <= int64(hi)+p.size; start += p.size {
		if p.ready[start] {
			continue
		}
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, partitionLockID); err != nil {
				return fmt.Errorf("lock partitions: %w", err)
			}
			for _, t := range partitionedTables {
				q := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF %s FOR VALUES FROM (%d) TO (%d)`,
					pgx.Identifier{PartitionName(t, start, p.size)}.Sanitize(), t, start, start+p.size)
				if _, err := tx.Exec(ctx, q); err != nil {
					return fmt.Errorf("create partition of %s from %d: %w", t, start, err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		p.ready[start] = true
		s.logger.Info("partitions ready", "from", start, "to", start+p.size-1)
	}
	return nil
}
