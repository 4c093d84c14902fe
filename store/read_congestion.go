package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
)

// ChunkCongestion returns the congestion_info of a stored chunk's header
// (nil for a chunk of a protocol without one) and the height that included
// the chunk; ErrNotFound when the chunk is not stored.
func (s *Store) ChunkCongestion(ctx context.Context, chunkHash string) (*near.CongestionInfo, uint64, error) {
	view, included, err := s.chunkView(ctx, chunkHash)
	if err != nil {
		return nil, 0, fmt.Errorf("congestion info: %w", err)
	}
	var chunk struct {
		Header struct {
			CongestionInfo *near.CongestionInfo `json:"congestion_info"`
		} `json:"header"`
	}
	if err := json.Unmarshal(view, &chunk); err != nil {
		return nil, 0, fmt.Errorf("decode congestion info of chunk %s: %w", chunkHash, err)
	}
	return chunk.Header.CongestionInfo, uint64(included), nil
}
