package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// The chain's configuration (chain_config, protocol_configs,
// epoch_protocol_versions) and where state history starts (history_start).

// GenesisConfig returns the stored genesis_config result.
func (s *Store) GenesisConfig(ctx context.Context) (json.RawMessage, error) {
	var view string
	err := s.pool.QueryRow(ctx, `SELECT view::text FROM chain_config WHERE name = 'genesis_config'`).Scan(&view)
	if err != nil {
		return nil, notFound(err, "genesis config")
	}
	return json.RawMessage(view), nil
}

// PutGenesisConfig stores the genesis_config result (replacing any).
func (s *Store) PutGenesisConfig(ctx context.Context, cfg json.RawMessage) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO chain_config (name, view) VALUES ('genesis_config', $1)
		ON CONFLICT (name) DO UPDATE SET view = EXCLUDED.view`, string(cfg))
	if err != nil {
		return fmt.Errorf("store genesis config: %w", err)
	}
	return nil
}

// ProtocolConfigAt returns the EXPERIMENTAL_protocol_config result of the
// epoch of the block at height.
func (s *Store) ProtocolConfigAt(ctx context.Context, height uint64) (json.RawMessage, error) {
	var view string
	err := s.pool.QueryRow(ctx, `SELECT p.view::text FROM blocks b
		JOIN epoch_protocol_versions e ON e.epoch_id = b.epoch_id
		JOIN protocol_configs p ON p.protocol_version = e.protocol_version
		WHERE b.height = $1`, int64(height)).Scan(&view)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("protocol config at %d", height))
	}
	return json.RawMessage(view), nil
}

// HistoryStart returns the height from which state history is complete.
func (s *Store) HistoryStart(ctx context.Context) (uint64, error) {
	var h int64
	err := s.pool.QueryRow(ctx, `SELECT height FROM history_start`).Scan(&h)
	if err != nil {
		return 0, notFound(err, "history start")
	}
	return uint64(h), nil
}

// SetHistoryStart records where state history starts (source is "genesis"
// or "snapshot"), unless it is already recorded.
func (s *Store) SetHistoryStart(ctx context.Context, height uint64, source string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO history_start (height, source) VALUES ($1, $2)
		ON CONFLICT (singleton) DO NOTHING`, int64(height), source)
	if err != nil {
		return fmt.Errorf("record history start %d: %w", height, err)
	}
	return nil
}
