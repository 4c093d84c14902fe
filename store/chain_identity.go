package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nearline/nearline/chain"
	"github.com/nearline/nearline/near"
)

// chainIdentityRow is the chain_config row that records the archive's
// chain: {"chain_id", "genesis_height", "genesis_hash"} (hash absent while
// unknown).
const chainIdentityRow = "chain_identity"

type identityView struct {
	ChainID       string `json:"chain_id"`
	GenesisHeight uint64 `json:"genesis_height"`
	GenesisHash   string `json:"genesis_hash,omitempty"`
}

// ChainIdentity returns the chain the archive holds, with the stored
// genesis config as its Config. An archive whose chain was not recorded
// (indexed by an older Nearline) is known by its genesis config and, when
// it holds it, its genesis block. ErrNotFound: nothing was ever indexed.
func (s *Store) ChainIdentity(ctx context.Context) (chain.Identity, error) {
	cfg, err := s.GenesisConfig(ctx)
	if errors.Is(err, ErrNotFound) {
		cfg = nil
	} else if err != nil {
		return chain.Identity{}, err
	}
	var view string
	err = s.pool.QueryRow(ctx, `SELECT view::text FROM chain_config WHERE name = $1`, chainIdentityRow).Scan(&view)
	switch {
	case err == nil:
		var v identityView
		if err := json.Unmarshal([]byte(view), &v); err != nil {
			return chain.Identity{}, fmt.Errorf("read chain identity: %w", err)
		}
		return chain.Identity{ChainID: v.ChainID, GenesisHeight: v.GenesisHeight, GenesisHash: v.GenesisHash, Config: cfg}, nil
	case cfg == nil:
		return chain.Identity{}, notFound(err, "chain identity")
	}
	id, err := chain.FromConfig(cfg)
	if err != nil {
		return chain.Identity{}, fmt.Errorf("stored genesis config: %w", err)
	}
	stamp, err := s.BlockStamp(ctx, near.HeightID(id.GenesisHeight))
	switch {
	case err == nil:
		id.GenesisHash = stamp.BlockHash
	case !errors.Is(err, ErrNotFound):
		return chain.Identity{}, err
	}
	return id, nil
}

// RecordChainIdentity records id as the archive's chain when none is
// recorded, and id's genesis hash when the recorded chain (the same
// chain_id and genesis height) has none yet. It never replaces a recorded
// chain: compare first (chain.Compare).
func (s *Store) RecordChainIdentity(ctx context.Context, id chain.Identity) error {
	view, err := json.Marshal(identityView{ChainID: id.ChainID, GenesisHeight: id.GenesisHeight, GenesisHash: id.GenesisHash})
	if err != nil {
		return fmt.Errorf("encode chain identity: %w", err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO chain_config (name, view) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET view = EXCLUDED.view
		WHERE chain_config.view->>'genesis_hash' IS NULL AND EXCLUDED.view->>'genesis_hash' IS NOT NULL
		  AND chain_config.view->>'chain_id' = EXCLUDED.view->>'chain_id'
		  AND chain_config.view->>'genesis_height' = EXCLUDED.view->>'genesis_height'`,
		chainIdentityRow, string(view))
	if err != nil {
		return fmt.Errorf("record chain identity: %w", err)
	}
	return nil
}
