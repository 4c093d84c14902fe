package store

import (
	"context"
	"errors"

	"github.com/nearline/nearline/chain"
)

// CheckChain refuses, before anything is written, an upstream (named
// upName in the error) of another chain than the archive's: an error
// wrapping chain.ErrOtherChain that names both sides. Otherwise it records
// the upstream's chain in an archive that has none, and the genesis
// block's hash once an upstream that has that block is asked
// (RecordChainIdentity).
func (s *Store) CheckChain(ctx context.Context, upstream chain.Identity, upName string) error {
	archived, err := s.ChainIdentity(ctx)
	switch {
	case errors.Is(err, ErrNotFound):
		s.logger.Info("recording the archive's chain", "chain_id", upstream.ChainID, "genesis_height", upstream.GenesisHeight,
			"genesis_hash", upstream.GenesisHash)
	case err != nil:
		return err
	default:
		if err := chain.Compare(archived, "the archive", upstream, upName); err != nil {
			return err
		}
	}
	return s.RecordChainIdentity(ctx, upstream)
}
