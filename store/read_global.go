package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
)

// ShardWindow is where global contract code on a shard may have come from:
// distributions targeted at Target, carried at or below To, executed by a
// chunk of Exec carried in [max(From, the distribution's block), To]. A
// shard's own window is (S, S, 0, H); a shard born of a split adds its
// parent's window up to the split (the code the parent had is on both
// children) and, for the left child, distributions still targeted at the
// parent that it executed after the split.
type ShardWindow struct {
	Target, Exec uint64
	From, To     uint64
}

// The newest distribution of the identifier in one of the windows whose
// executing shard has had a chunk since (a receipt executes at its
// target shard's next chunk); a higher nonce wins when the upstream gives
// one, then the later receipt.
const globalCodeInSQL = `
SELECT d.code_hash, c.code
FROM unnest($3::int[], $4::int[], $5::bigint[], $6::bigint[]) AS w(target, exec, lo, hi)
JOIN global_contract_distributions d
  ON d.identifier = $1 AND d.identifier_kind = $2 AND d.target_shard = w.target AND d.block_height <= w.hi
JOIN contract_codes c ON c.code_hash = d.code_hash
WHERE EXISTS (SELECT 1 FROM chunks ch
              WHERE ch.block_height >= GREATEST(d.block_height, w.lo) AND ch.block_height <= w.hi AND ch.shard_id = w.exec)
ORDER BY d.nonce DESC NULLS LAST, d.block_height DESC, d.index_in_chunk DESC
LIMIT 1`

// GlobalContractCodeIn returns the newest global contract code id names
// that reached a shard through one of windows, and its hash; ErrNotFound
// when none did.
func (s *Store) GlobalContractCodeIn(ctx context.Context, id near.GlobalContractID, windows []ShardWindow) ([]byte, string, error) {
	var (
		hash string
		code []byte
	)
	targets, execs := make([]int32, len(windows)), make([]int32, len(windows))
	los, his := make([]int64, len(windows)), make([]int64, len(windows))
	for i, w := range windows {
		targets[i], execs[i], los[i], his[i] = int32(w.Target), int32(w.Exec), int64(w.From), int64(w.To)
	}
	what := fmt.Sprintf("global contract %s %s in %v", id.Kind(), id.Value(), windows)
	err := s.pool.QueryRow(ctx, globalCodeInSQL, id.Value(), id.Kind(), targets, execs, los, his).Scan(&hash, &code)
	if err != nil {
		return nil, "", notFound(err, what)
	}
	return code, hash, nil
}

// LayoutSpan is a shard layout and the first indexed height of the
// protocol version that has it.
type LayoutSpan struct {
	FirstHeight uint64
	Layout      near.ShardLayout
}

// ShardLayouts returns the shard layouts of the stored protocol configs,
// by ascending first height.
func (s *Store) ShardLayouts(ctx context.Context) ([]LayoutSpan, error) {
	rows, err := s.pool.Query(ctx, `SELECT first_height, view->'shard_layout' FROM protocol_configs ORDER BY first_height`)
	if err != nil {
		return nil, fmt.Errorf("read shard layouts: %w", err)
	}
	defer rows.Close()
	var out []LayoutSpan
	for rows.Next() {
		var (
			first int64
			raw   []byte
		)
		if err := rows.Scan(&first, &raw); err != nil {
			return nil, fmt.Errorf("read shard layouts: %w", err)
		}
		span := LayoutSpan{FirstHeight: uint64(first)}
		if len(raw) > 0 && json.Unmarshal(raw, &span.Layout) != nil {
			continue // a layout version Nearline does not read
		}
		out = append(out, span)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read shard layouts: %w", err)
	}
	return out, nil
}
