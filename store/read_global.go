package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

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

// globalCandidatesSQL lists the distributions of the identifier in one of
// the windows, newest first: a higher nonce wins when the upstream gives
// one, then the later receipt. Each is taken when its window's executing
// shard has had a chunk since (a receipt executes at its target shard's
// next chunk).
const globalCandidatesSQL = `
SELECT d.code_hash, GREATEST(d.block_height, w.lo), w.hi, w.exec
FROM unnest($3::int[], $4::int[], $5::bigint[], $6::bigint[]) AS w(target, exec, lo, hi)
JOIN global_contract_distributions d
  ON d.identifier = $1 AND d.identifier_kind = $2 AND d.target_shard = w.target AND d.block_height <= w.hi
ORDER BY d.nonce DESC NULLS LAST, d.block_height DESC, d.index_in_chunk DESC`

// GlobalContractCodeIn returns the newest global contract code id names
// that reached a shard through one of windows, and its hash; ErrNotFound
// when none did. The distributions (a reference table) are listed first,
// then each one's chunk and code are looked up on their own: on a
// distributed archive a subquery over chunks by a height range, correlated
// with the list, could not be planned.
func (s *Store) GlobalContractCodeIn(ctx context.Context, id near.GlobalContractID, windows []ShardWindow) ([]byte, string, error) {
	targets, execs := make([]int32, len(windows)), make([]int32, len(windows))
	los, his := make([]int64, len(windows)), make([]int64, len(windows))
	for i, w := range windows {
		targets[i], execs[i], los[i], his[i] = int32(w.Target), int32(w.Exec), int64(w.From), int64(w.To)
	}
	what := fmt.Sprintf("global contract %s %s in %v", id.Kind(), id.Value(), windows)
	type candidate struct {
		Hash  string
		From  int64
		To    int64
		Shard int32
	}
	rows, err := s.pool.Query(ctx, globalCandidatesSQL, id.Value(), id.Kind(), targets, execs, los, his)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", what, err)
	}
	candidates, err := pgx.CollectRows(rows, pgx.RowToStructByPos[candidate])
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", what, err)
	}
	for _, c := range candidates {
		var executed bool
		err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM chunks WHERE block_height >= $1 AND block_height <= $2 AND shard_id = $3)`,
			c.From, c.To, c.Shard).Scan(&executed)
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", what, err)
		}
		if !executed {
			continue
		}
		var code []byte
		err = s.pool.QueryRow(ctx, `SELECT code FROM contract_codes WHERE code_hash = $1`, c.Hash).Scan(&code)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			continue
		case err != nil:
			return nil, "", fmt.Errorf("read %s: %w", what, err)
		}
		return code, c.Hash, nil
	}
	return nil, "", fmt.Errorf("%s: %w", what, ErrNotFound)
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
