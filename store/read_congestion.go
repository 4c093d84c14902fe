package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
)

const chunkCongestionSQL = `
SELECT view->'header'->'congestion_info', (view->'header'->>'height_included')::bigint
FROM chunks WHERE chunk_hash = $1`

// ChunkCongestion returns the congestion_info of a stored chunk's header
// (nil for a chunk of a protocol without one) and the height that included
// the chunk; ErrNotFound when the chunk is not stored.
func (s *Store) ChunkCongestion(ctx context.Context, chunkHash string) (*near.CongestionInfo, uint64, error) {
	var raw []byte
	var included int64
	if err := s.pool.QueryRow(ctx, chunkCongestionSQL, chunkHash).Scan(&raw, &included); err != nil {
		return nil, 0, notFound(err, "congestion info of chunk "+chunkHash)
	}
	var info *near.CongestionInfo
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &info); err != nil {
			return nil, 0, fmt.Errorf("decode congestion info of chunk %s: %w", chunkHash, err)
		}
	}
	return info, uint64(included), nil
}
