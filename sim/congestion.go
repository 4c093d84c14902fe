package sim

import (
	"context"
	"fmt"

	"github.com/nearline/nearline/near"
)

// CongestionLevel answers `EXPERIMENTAL_congestion_level`: the level of the
// congestion_info in the header of the chunk `chunk` would return, under
// the chain's congestion control config.
func (n *Node) CongestionLevel(_ context.Context, req near.ChunkRequest) (*near.CongestionLevelView, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	ch, err := n.chain.chunkFor(req)
	if err != nil {
		return nil, err
	}
	cfg, err := near.CongestionConfigOf(n.chain.protocol)
	if err != nil {
		return nil, fmt.Errorf("read congestion control config: %w", err)
	}
	return &near.CongestionLevelView{CongestionLevel: near.F64(near.CongestionLevel(ch.view.Header.CongestionInfo, cfg))}, nil
}
