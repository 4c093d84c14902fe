package archive

import (
	"context"
	"fmt"
)

// epochStart is the first height of an epoch, by the epoch's id.
type epochStart struct {
	epochID string
	height  uint64
}

// epochStart returns the height of the first block of head's epoch, as
// nearcore's status reports it (sync_info.epoch_start_height): the lowest
// stored block of that epoch, when the block before it is stored too (so
// that it is the epoch's first) or it is the genesis block. It is nil
// when the archive does not hold the epoch's start: it begins inside the
// epoch, or heights below are not indexed yet. A start once found never
// changes, so the last one is kept.
func (a *Backend) epochStart(ctx context.Context, head blockHeader, genesisHeight *uint64) (*uint64, error) {
	a.mu.Lock()
	last := a.lastEpoch
	a.mu.Unlock()
	if last.epochID != "" && last.epochID == head.EpochID {
		return &last.height, nil
	}
	start, prevStored, err := a.store.EpochStart(ctx, head.Height)
	if err != nil {
		return nil, fmt.Errorf("read the start of epoch %s: %w", head.EpochID, err)
	}
	if !prevStored && (genesisHeight == nil || start != *genesisHeight) {
		return nil, nil
	}
	a.mu.Lock()
	a.lastEpoch = epochStart{epochID: head.EpochID, height: start}
	a.mu.Unlock()
	return &start, nil
}
