package store

import (
	"context"
	"fmt"
)

// EpochStart returns the first stored block of the epoch of the stored
// block at height: the lowest stored height at or below it in the same
// epoch. An epoch's blocks are consecutive, so it is found by bisecting
// the stored heights (about log2 of the range, one index probe each)
// rather than by scanning blocks, which have no index on epoch_id.
// prevStored reports whether that block's previous block is stored too,
// which makes it the epoch's first block; when not, the epoch may start
// below the archive's first block or in heights not indexed yet (a block
// without a previous one, the genesis, has prevStored false).
func (s *Store) EpochStart(ctx context.Context, height uint64) (start uint64, prevStored bool, err error) {
	var epochID string
	if err := s.pool.QueryRow(ctx, `SELECT epoch_id FROM blocks WHERE height = $1`, int64(height)).Scan(&epochID); err != nil {
		return 0, false, notFound(err, fmt.Sprintf("block %d", height))
	}
	lowest, _, err := s.EarliestBlock(ctx)
	if err != nil {
		return 0, false, err
	}
	// Invariant: the first stored block at or above hi is in the epoch,
	// and below lo none is.
	lo, hi := lowest, height
	for lo < hi {
		mid := lo + (hi-lo)/2
		first, epoch, err := s.firstBlockFrom(ctx, mid)
		if err != nil {
			return 0, false, err
		}
		if epoch == epochID {
			hi = mid
			continue
		}
		lo = first + 1 // first >= mid: no height up to it is in the epoch
	}
	start, _, err = s.firstBlockFrom(ctx, lo)
	if err != nil {
		return 0, false, err
	}
	// Two reads by height, each on one shard of a distributed archive (a
	// subquery correlated on prev_height would not be).
	var prev *int64
	if err := s.pool.QueryRow(ctx, `SELECT prev_height FROM blocks WHERE height = $1`, int64(start)).Scan(&prev); err != nil {
		return 0, false, notFound(err, fmt.Sprintf("block %d", start))
	}
	if prev == nil {
		return start, false, nil
	}
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blocks WHERE height = $1)`, *prev).Scan(&prevStored); err != nil {
		return 0, false, fmt.Errorf("look up block %d: %w", *prev, err)
	}
	return start, prevStored, nil
}

// firstBlockFrom returns the height and epoch of the lowest stored block
// at or above height.
func (s *Store) firstBlockFrom(ctx context.Context, height uint64) (uint64, string, error) {
	var h int64
	var epochID string
	err := s.pool.QueryRow(ctx, `SELECT height, epoch_id FROM blocks WHERE height >= $1 ORDER BY height LIMIT 1`, int64(height)).Scan(&h, &epochID)
	if err != nil {
		return 0, "", notFound(err, fmt.Sprintf("block at or above %d", height))
	}
	return uint64(h), epochID, nil
}
