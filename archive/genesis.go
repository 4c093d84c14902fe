package archive

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
)

// genesisFacts is what call_function needs from the genesis config: how to
// number epochs and the validators' stakes.
type genesisFacts struct {
	height      uint64
	epochLength uint64
	stakes      map[string]nearvm.U128
}

// genesis reads the stored genesis config once; it never changes.
func (a *Backend) genesis(ctx context.Context) (*genesisFacts, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.genesisCache != nil {
		return a.genesisCache, nil
	}
	raw, err := a.store.GenesisConfig(ctx)
	if isNotFound(err) {
		return &genesisFacts{}, nil // not indexed yet: do not cache
	}
	if err != nil {
		return nil, fmt.Errorf("read genesis config: %w", err)
	}
	var g struct {
		GenesisHeight uint64             `json:"genesis_height"`
		EpochLength   uint64             `json:"epoch_length"`
		Validators    []near.AccountInfo `json:"validators"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, fmt.Errorf("decode genesis config: %w", err)
	}
	facts := &genesisFacts{height: g.GenesisHeight, epochLength: g.EpochLength, stakes: map[string]nearvm.U128{}}
	for _, v := range g.Validators {
		facts.stakes[v.AccountID] = nearvm.U128{Hi: v.Amount.Hi, Lo: v.Amount.Lo}
	}
	a.genesisCache = facts
	return facts, nil
}

// epochHeight numbers the epoch of height as fixed-length epochs from
// genesis (the archive does not store epoch heights).
func (g *genesisFacts) epochHeight(height uint64) uint64 {
	if g.epochLength == 0 || height < g.height {
		return 0
	}
	return (height - g.height) / g.epochLength
}
