package upstream

import (
	"context"
	"sync"

	"github.com/nearline/nearline/bundle"
)

// Epochs is the per-epoch claim on protocol configs that both sources
// share: the first bundle of an epoch to Claim it carries the epoch's
// config (Config), so blocks of one epoch fetched together ask once, and a
// bundle that is not returned Releases its claim so the next one of its
// epoch carries the config again. It also remembers each epoch's shard
// layout, read from its config (Layout).
type Epochs struct {
	rpc RPC

	mu      sync.Mutex
	claimed map[string]bool     // epochs whose config went out with a bundle
	layouts map[string][]uint64 // shard ids of each epoch's layout, by index
}

// NewEpochs returns claims whose configs are fetched from rpc.
func NewEpochs(rpc RPC) *Epochs {
	return &Epochs{rpc: rpc, claimed: map[string]bool{}, layouts: map[string][]uint64{}}
}

// Claim claims epoch and reports whether this caller is the first: it
// then fetches the config (Config) and Releases the claim if its bundle
// is not returned.
func (e *Epochs) Claim(epoch string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	first := !e.claimed[epoch]
	e.claimed[epoch] = true
	return first
}

// Release gives up a claim whose bundle was not returned.
func (e *Epochs) Release(epoch string) {
	e.mu.Lock()
	delete(e.claimed, epoch)
	e.mu.Unlock()
}

// Reset forgets every claim (the layouts stay): a failed run may not have
// committed the bundles that carried them.
func (e *Epochs) Reset() {
	e.mu.Lock()
	clear(e.claimed)
	e.mu.Unlock()
}

// Config fetches epoch's protocol config at the block with hash and
// remembers its layout.
func (e *Epochs) Config(ctx context.Context, epoch, hash string) (*bundle.ProtocolConfig, error) {
	cfg, err := FetchProtocolConfig(ctx, e.rpc, epoch, hash)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.layouts[epoch] = ConfigShardIDs(cfg.JSON)
	e.mu.Unlock()
	return cfg, nil
}

// Layout returns the shard ids, by index, of epoch's layout (nil when its
// config has none), fetching the config at the block with hash when the
// layout is not known yet.
func (e *Epochs) Layout(ctx context.Context, epoch, hash string) ([]uint64, error) {
	e.mu.Lock()
	ids, ok := e.layouts[epoch]
	e.mu.Unlock()
	if ok {
		return ids, nil
	}
	cfg, err := e.Config(ctx, epoch, hash)
	if err != nil {
		return nil, err
	}
	return ConfigShardIDs(cfg.JSON), nil
}
