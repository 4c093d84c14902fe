package archive

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
)

// flavor picks the errors nearcore gives a method family for a block it
// cannot select.
type flavor int

const (
	// blockFlavor: block, chunk, changes, gas_price, protocol config:
	// UNKNOWN_BLOCK without info, NOT_SYNCED_YET.
	blockFlavor flavor = iota
	// queryFlavor: query: UNKNOWN_BLOCK with the block reference,
	// NO_SYNCED_BLOCKS; and state must be known at the height.
	queryFlavor
)

func (f flavor) unknown(ref near.BlockReference) *near.Error {
	if f == queryFlavor {
		return near.QueryUnknownBlock(ref)
	}
	if ref.BlockID == nil {
		return near.UnknownBlock(near.HashID(""))
	}
	return near.UnknownBlock(*ref.BlockID)
}

func (f flavor) notSynced() *near.Error {
	if f == queryFlavor {
		return near.NoSyncedBlocks()
	}
	return near.NotSyncedYet()
}

// resolve selects the block ref names. Finality (any of the three) selects
// the latest indexed block. A block_id is looked up first; only when it is
// not stored does resolve work out why (not synced, above the head, below
// the archive's start, skipped).
func (a *Backend) resolve(ctx context.Context, ref near.BlockReference, fl flavor) (near.BlockStamp, error) {
	id := ref.BlockID
	switch ref.SyncCheckpoint {
	case "earliest_available":
		return a.resolveEnd(ctx, fl, "earliest", a.store.EarliestBlock)
	case "genesis":
		h, err := a.genesisHeight(ctx)
		if err != nil {
			return near.BlockStamp{}, err
		}
		gid := near.HeightID(h)
		id = &gid
	}
	if id == nil {
		return a.resolveEnd(ctx, fl, "latest", a.store.LatestBlock)
	}

	stamp, err := a.store.BlockStamp(ctx, *id)
	if err == nil {
		return a.checkState(ctx, stamp, fl)
	}
	if !isNotFound(err) {
		return near.BlockStamp{}, fmt.Errorf("read block %s: %w", id, err)
	}
	latest, _, err := a.store.LatestBlock(ctx)
	if isNotFound(err) {
		return near.BlockStamp{}, fl.notSynced()
	}
	if err != nil {
		return near.BlockStamp{}, fmt.Errorf("read latest block: %w", err)
	}
	if !id.IsHeight() {
		// A hash the archive does not know may be older than its start.
		return near.BlockStamp{}, &rpcserve.ForwardError{Reason: fl.unknown(ref)}
	}
	if id.Height < latest {
		start, _, err := a.store.EarliestBlock(ctx)
		if err != nil {
			return near.BlockStamp{}, fmt.Errorf("read earliest block: %w", err)
		}
		if id.Height < start {
			return near.BlockStamp{}, &rpcserve.ForwardError{Reason: rpcserve.BeforeArchive(id.Height, start)}
		}
		gap, err := a.gapError(ctx, id.Height)
		if err != nil {
			return near.BlockStamp{}, err
		}
		if gap != nil {
			return near.BlockStamp{}, gap
		}
	}
	// A height the chain skipped, or one above the head.
	return near.BlockStamp{}, fl.unknown(ref)
}

// resolveEnd resolves to the archive's earliest or latest block, as read
// reads it (which end names it in an error): not synced when there is
// none yet.
func (a *Backend) resolveEnd(ctx context.Context, fl flavor, which string, read func(context.Context) (uint64, string, error)) (near.BlockStamp, error) {
	height, hash, err := read(ctx)
	if isNotFound(err) {
		return near.BlockStamp{}, fl.notSynced()
	}
	if err != nil {
		return near.BlockStamp{}, fmt.Errorf("read %s block: %w", which, err)
	}
	return a.checkState(ctx, near.BlockStamp{BlockHeight: height, BlockHash: hash}, fl)
}

// checkState makes sure a query's state is known at the block: state
// history is complete from the recorded history start (or, when none was
// recorded, from the first indexed block), up to the block when the ranges
// between them are all indexed.
func (a *Backend) checkState(ctx context.Context, stamp near.BlockStamp, fl flavor) (near.BlockStamp, error) {
	if fl != queryFlavor {
		return stamp, nil
	}
	start, err := a.stateStart(ctx)
	if err != nil {
		return near.BlockStamp{}, err
	}
	if stamp.BlockHeight < start {
		return near.BlockStamp{}, &rpcserve.ForwardError{Reason: rpcserve.BeforeArchive(stamp.BlockHeight, start)}
	}
	decided, missing, err := a.stateDecided(ctx, stamp.BlockHeight, start)
	if err != nil {
		return near.BlockStamp{}, err
	}
	if !decided {
		return near.BlockStamp{}, &rpcserve.ForwardError{Reason: stateNotDecided(stamp.BlockHeight, missing)}
	}
	return stamp, nil
}

func (a *Backend) genesisHeight(ctx context.Context) (uint64, error) {
	raw, err := a.genesisConfig(ctx)
	if err != nil {
		return 0, err
	}
	var g struct {
		GenesisHeight uint64 `json:"genesis_height"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return 0, fmt.Errorf("decode genesis config: %w", err)
	}
	return g.GenesisHeight, nil
}

// historyStart is the recorded start of state history: its height and
// source ("genesis": every account is complete from there; "snapshot"). An
// empty source means none is recorded: the first indexed block is used.
type historyStart struct {
	height uint64
	source string
}

// stateStart is the height from which queries may be answered at all (the
// recorded history start, or the first block): below it every account is
// unknown to the archive.
func (a *Backend) stateStart(ctx context.Context) (uint64, error) {
	hs, err := a.history(ctx)
	return hs.height, err
}

// history reads the history start, cached once recorded (it never moves).
func (a *Backend) history(ctx context.Context) (historyStart, error) {
	a.mu.Lock()
	cached := a.historyStart
	a.mu.Unlock()
	if cached != nil {
		return *cached, nil
	}
	start, source, err := a.store.HistorySource(ctx)
	if err == nil {
		hs := historyStart{height: start, source: source}
		a.mu.Lock()
		a.historyStart = &hs
		a.mu.Unlock()
		return hs, nil
	}
	if !isNotFound(err) {
		return historyStart{}, fmt.Errorf("read history start: %w", err)
	}
	start, _, err = a.store.EarliestBlock(ctx)
	if err != nil {
		return historyStart{}, fmt.Errorf("read earliest block: %w", err)
	}
	return historyStart{height: start}, nil
}
