package archive

import (
	"context"
	"fmt"

	"github.com/nearline/nearline/near"
)

// congestionLevel answers `EXPERIMENTAL_congestion_level` as nearcore does:
// the chunk `chunk` would return, its header's congestion_info, and the
// congestion control config of the protocol at the height that included
// it. A chunk or config the archive lacks (older than its first block) may
// be known upstream.
func (a *Backend) congestionLevel(ctx context.Context, req near.ChunkRequest) (*near.CongestionLevelView, error) {
	hash, err := a.chunkHash(ctx, req)
	if err != nil {
		return nil, err
	}
	info, included, err := a.store.ChunkCongestion(ctx, hash)
	if err != nil {
		return nil, readFailed(err, near.UnknownChunk(hash), "read congestion info of chunk "+hash)
	}
	protocol, err := a.store.ProtocolConfigAt(ctx, included)
	if err != nil {
		return nil, readFailed(err, noProtocolConfig(included), fmt.Sprintf("read protocol config at %d", included))
	}
	cfg, err := near.CongestionConfigOf(protocol)
	if err != nil {
		return nil, fmt.Errorf("read congestion control config at %d: %w", included, err)
	}
	return &near.CongestionLevelView{CongestionLevel: near.F64(near.CongestionLevel(info, cfg))}, nil
}
