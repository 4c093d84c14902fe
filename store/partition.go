package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// partitionedTables are the block-keyed tables, range-partitioned by height
// (migrations 00007 and 00008; the token event tables renamed by 00018,
// transactions, receipts and outcomes by 00020).
var partitionedTables = []string{"blocks", "skipped_heights", "block_chunks", "chunks", "transactions_ids", "receipts_ids",
	"execution_outcomes_ids", "transaction_statuses", "block_changes",
	"block_tx_statuses", "ft_events_ids", "nft_events_ids", "mt_events_ids"}

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

// partitionTimeout bounds the creation of one range's partitions.
const partitionTimeout = 2 * time.Minute

// EnsurePartitions creates, for every block-keyed table, the partitions
// holding heights lo to hi and the one after (so a writer is a range
// ahead). Each range is created in its own short transaction, never inside
// a commit: creating a partition locks its parent table. A range once
// started is finished even if ctx is cancelled (within partitionTimeout):
// under load it can take longer than a caller that is often stopped waits,
// and abandoning it would only make the next start redo it.
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
		if err := ctx.Err(); err != nil {
			return err
		}
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), partitionTimeout)
		err := pgx.BeginFunc(pctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(pctx, `SELECT pg_advisory_xact_lock($1)`, partitionLockID); err != nil {
				return fmt.Errorf("lock partitions: %w", err)
			}
			for _, t := range partitionedTables {
				q := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF %s FOR VALUES FROM (%d) TO (%d)`,
					pgx.Identifier{PartitionName(t, start, p.size)}.Sanitize(), t, start, start+p.size)
				if _, err := tx.Exec(pctx, q); err != nil {
					return fmt.Errorf("create partition of %s from %d: %w", t, start, err)
				}
			}
			return nil
		})
		cancel()
		if err != nil {
			return err
		}
		p.ready[start] = true
		s.logger.Info("partitions ready", "from", start, "to", start+p.size-1)
	}
	return nil
}
