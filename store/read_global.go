package store

import (
	"context"
	"fmt"

	"github.com/nearline/nearline/near"
)

// The newest distribution of the identifier to the shard carried at or
// below the height whose target shard has had a chunk since (a receipt
// executes at its target shard's next chunk); a higher nonce wins when the
// upstream gives one, then the later receipt.
const globalCodeAtSQL = `
SELECT d.code_hash, c.code
FROM global_contract_distributions d
JOIN contract_codes c ON c.code_hash = d.code_hash
WHERE d.identifier = $1 AND d.identifier_kind = $2 AND d.target_shard = $3 AND d.block_height <= $4
  AND EXISTS (SELECT 1 FROM chunks ch
              WHERE ch.block_height >= d.block_height AND ch.block_height <= $4 AND ch.shard_id = d.target_shard)
ORDER BY d.nonce DESC NULLS LAST, d.block_height DESC, d.index_in_chunk DESC
LIMIT 1`

// GlobalContractCodeAt returns the global contract code id names as it was
// on shard after the block at height, and its hash; ErrNotFound when the
// code had not reached the shard.
func (s *Store) GlobalContractCodeAt(ctx context.Context, id near.GlobalContractID, shard uint64, height uint64) ([]byte, string, error) {
	var (
		hash string
		code []byte
	)
	what := fmt.Sprintf("global contract %s %s on shard %d at %d", id.Kind(), id.Value(), shard, height)
	err := s.pool.QueryRow(ctx, globalCodeAtSQL, id.Value(), id.Kind(), int32(shard), int64(height)).Scan(&hash, &code)
	if err != nil {
		return nil, "", notFound(err, what)
	}
	return code, hash, nil
}
