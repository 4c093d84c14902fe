package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/nearline/nearline/bundle"
)

// Account bases (table account_bases, migration 00002): where an account's
// whole state is in the history tables when history does not start at
// genesis. They are recorded, not derived at read time, so a read is one
// primary-key probe; deriving them would join state changes, receipts and
// actions on every query.
//
// A base is recorded in the transaction that stores what makes it true:
//   - 'snapshot': PutAccountSnapshot, at the snapshot height (also for an
//     account that did not exist there: its empty state is exact too).
//   - 'creation' (Commit): an account_update caused by a receipt to that
//     account whose actions include CreateAccount; or by a receipt whose
//     actions are all Transfers that also wrote an access key or contract
//     code of the implicit account (64 hex digits, or 0x and 40) in that
//     block, which only the creation of an implicit account does (a
//     transfer to an existing account touches only the account). Receipts
//     from "system" are excluded: a gas refund is a Transfer that may
//     return allowance to a function-call access key. The receipt must be stored: one listed in a chunk
//     before the archive's first block gives no base, so the account is
//     answered as unknown (forwarded), never wrongly.
//   - 'deletion' (Commit): an account_deletion; deleting an account
//     deletes every key, code and data entry with a change each, so its
//     state from then on is exact.
//
// The earliest base wins; re-committing heights never moves it later.

// recordBasesSQL finds the bases of blocks $1..$2 from their stored state
// changes, receipts and actions. The candidates (accounts updated by a
// receipt they received) come first; then each of their receipts' chunks
// has its action arrays read once (acts), not once per candidate: the
// arrays are decompressed for each read (probing them per candidate took
// PostgreSQL's CPU per mainnet block from 15 to 25 ms).
const recordBasesSQL = `
WITH cand AS MATERIALIZED (
    SELECT sc.account_id, sc.block_height, sc.cause_receipt_hash, r.block_height AS receipt_height, r.shard_id,
           r.index_in_chunk, r.predecessor_id
    FROM state_changes sc
    -- The receipt by its id alone: with receiver_id in the join condition
    -- the planner ANDs in an index by receiver, whose matches grow with
    -- the account's history (seconds per batch, growing, on a long chain).
    -- A receipt is listed in a chunk at or below the height it runs at:
    -- saying so prunes the partitions above, which the lookup by id alone
    -- would each probe (a third of this part on the real mainnet chain).
    JOIN LATERAL (
        SELECT r.* FROM receipts r
        WHERE r.receipt_id = sc.cause_receipt_hash AND r.block_height <= sc.block_height OFFSET 0
    ) r ON r.receiver_id = sc.account_id
    WHERE sc.block_height BETWEEN $1 AND $2
      AND sc.change_type = 'account_update' AND sc.cause_type = 'receipt_processing'
), acts AS MATERIALIZED (
    SELECT c.block_height, c.shard_id, a.parent_index,
           bool_or(a.kind = 'CreateAccount' AND a.delegate_parent_index IS NULL) AS creates,
           bool_and(a.kind = 'Transfer') AS transfers_only
    FROM (SELECT DISTINCT receipt_height, shard_id FROM cand) k
    JOIN chunks c ON c.block_height = k.receipt_height AND c.shard_id = k.shard_id
    CROSS JOIN LATERAL unnest(c.action_parent_kinds, c.action_parent_indexes, c.action_kinds,
        c.action_delegate_parent_indexes) AS a(parent_kind, parent_index, kind, delegate_parent_index)
    WHERE a.parent_kind = 'receipt'
    GROUP BY 1, 2, 3
), judged AS (
    -- Each candidate with what its receipt's actions say: a window over
    -- both lists by receipt, not a join (the planner, which cannot
    -- estimate either list, would loop over both).
    SELECT *, coalesce(bool_or(creates) OVER w, false) AS receipt_creates,
           coalesce(bool_and(transfers_only) OVER w, true) AS receipt_transfers_only
    FROM (SELECT receipt_height, shard_id, index_in_chunk, account_id, block_height, cause_receipt_hash,
                 predecessor_id, NULL::boolean AS creates, NULL::boolean AS transfers_only FROM cand
          UNION ALL
          SELECT block_height, shard_id, parent_index, NULL, NULL, NULL, NULL, creates, transfers_only FROM acts) u
    WINDOW w AS (PARTITION BY receipt_height, shard_id, index_in_chunk)
)
INSERT INTO account_bases (account_id, height, source)
SELECT DISTINCT ON (account_id) account_id, block_height, source FROM (
    SELECT j.account_id, j.block_height, 'creation' AS source
    FROM judged j
    WHERE j.account_id IS NOT NULL
      AND (j.receipt_creates
           OR (j.predecessor_id <> 'system'
               AND (j.account_id ~ '^[0-9a-f]{64}$' OR j.account_id ~ '^0x[0-9a-f]{40}$')
               AND j.receipt_transfers_only
               AND EXISTS (SELECT 1 FROM state_changes k
                           WHERE k.block_height = j.block_height AND k.account_id = j.account_id
                             AND k.cause_receipt_hash = j.cause_receipt_hash
                             AND k.change_type IN ('access_key_update', 'contract_code_update'))))
    UNION ALL
    SELECT sc.account_id, sc.block_height, 'deletion'
    FROM state_changes sc
    WHERE sc.block_height BETWEEN $1 AND $2 AND sc.change_type = 'account_deletion'
) found
ORDER BY account_id, block_height
ON CONFLICT (account_id) DO UPDATE
SET height = EXCLUDED.height, source = EXCLUDED.source
WHERE EXCLUDED.height < account_bases.height`

func recordBases(ctx context.Context, tx pgx.Tx, lo, hi int64) error {
	if _, err := tx.Exec(ctx, recordBasesSQL, lo, hi); err != nil {
		return fmt.Errorf("record account bases %d-%d: %w", lo, hi, err)
	}
	return nil
}

// PutAccountSnapshot stores one account's state fetched at height (changes
// as for PutBaseState; none when the account did not exist there) and
// records height as its base, in one transaction.
func (s *Store) PutAccountSnapshot(ctx context.Context, height uint64, accountID string, changes []bundle.StateChange) error {
	rows := newRowSet(s.codec)
	if _, _, err := rows.addChangeRows(int64(height), changes); err != nil {
		return fmt.Errorf("put snapshot of %s at %d: %w", accountID, height, err)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := copyBaseRows(ctx, tx, rows); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO account_bases (account_id, height, source) VALUES ($1, $2, 'snapshot')
			ON CONFLICT (account_id) DO UPDATE SET height = EXCLUDED.height, source = EXCLUDED.source
			WHERE EXCLUDED.height < account_bases.height`, accountID, int64(height))
		return err
	})
	if err != nil {
		return fmt.Errorf("put snapshot of %s at %d: %w", accountID, height, err)
	}
	return nil
}

// AccountBase returns the height from which accountID's whole state is in
// the archive and how that is known ("snapshot", "creation", "deletion");
// ErrNotFound when it has none. With a genesis history start every account
// is complete from there and has no row here.
func (s *Store) AccountBase(ctx context.Context, accountID string) (height uint64, source string, err error) {
	var h int64
	err = s.pool.QueryRow(ctx, `SELECT height, source FROM account_bases WHERE account_id = $1`, accountID).Scan(&h, &source)
	if err != nil {
		return 0, "", notFound(err, "base of account "+accountID)
	}
	return uint64(h), source, nil
}

// HistorySource returns the history start and its source ("genesis" or
// "snapshot"); ErrNotFound when none is recorded.
func (s *Store) HistorySource(ctx context.Context) (height uint64, source string, err error) {
	var h int64
	err = s.pool.QueryRow(ctx, `SELECT height, source FROM history_start`).Scan(&h, &source)
	if err != nil {
		return 0, "", notFound(err, "history start")
	}
	return uint64(h), source, nil
}

// CodeByHash returns stored contract code by its hash; ErrNotFound when
// the archive has no code with that hash.
func (s *Store) CodeByHash(ctx context.Context, codeHash string) ([]byte, error) {
	var code []byte
	err := s.pool.QueryRow(ctx, `SELECT code FROM contract_codes WHERE code_hash = $1`, codeHash).Scan(&code)
	if err != nil {
		return nil, notFound(err, "contract code "+codeHash)
	}
	return code, nil
}

// ErrDeleted marks an ErrNotFound answer for a key whose newest row at the
// height is a deletion (as opposed to one the archive has no row for).
var ErrDeleted = errors.New("deleted")
