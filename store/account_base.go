package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
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

// A batch's bases are found where its rows are built (findBases): the
// batch's own state changes name the candidates (accounts updated by a
// receipt they received) and the deletions, and a candidate whose receipt
// the batch itself lists is judged from that receipt's actions in Go. A
// candidate whose receipt was listed before the batch (a receipt runs in
// the block after the one whose chunk lists it, so the candidates of a
// batch's first block mostly) is judged by recordBasesSQL from the stored
// rows. Judging every candidate in PostgreSQL took ~6.6 ms of its CPU per
// mainnet block, most of it taking the batch's change and action arrays
// apart again.

// baseCandidate is an account updated in a block by a receipt it received:
// its creation base when the receipt created it.
type baseCandidate struct {
	account string
	height  int64
	receipt string
	// keysOrCode: the same receipt wrote an access key or the contract
	// code of the account in that block, as only the creation of an
	// implicit account by a transfer does.
	keysOrCode bool
}

// accountBase is a base found: the account, its height, its source.
type accountBase struct {
	account string
	height  int64
	source  string
}

// receiptFacts is what judging a candidate needs of a receipt the batch
// lists: where, who sent it to whom, and what its actions do (a receipt
// without actions creates nothing and does nothing but transfers, as the
// SQL's coalesce has it).
type receiptFacts struct {
	height                 int64
	predecessor, receiver  string
	creates, transfersOnly bool
}

// implicitAccount matches the ids of NEAR's implicit accounts: 64 hex
// digits, or 0x and 40 (ETH-implicit).
var implicitAccount = regexp.MustCompile(`^(?:[0-9a-f]{64}|0x[0-9a-f]{40})$`)

// createdBy reports whether receipt f created account (the judgement
// recordBasesSQL makes of a stored receipt).
func (f receiptFacts) createdBy(c baseCandidate) bool {
	return f.creates || (f.predecessor != "system" && implicitAccount.MatchString(c.account) && f.transfersOnly && c.keysOrCode)
}

// judge returns the candidates' bases it can judge from the receipts the
// batch lists (receipts: by id) and the candidates it cannot, for
// recordBasesSQL: a receipt counts when it is listed at or below the
// candidate's height, as the stored receipt the SQL looks up would be.
func judge(candidates []baseCandidate, receipts map[string][]receiptFacts) (found []accountBase, remote []baseCandidate) {
	for _, c := range candidates {
		listed, created := false, false
		for _, f := range receipts[c.receipt] {
			if f.height > c.height {
				continue
			}
			listed = true
			created = created || (f.receiver == c.account && f.createdBy(c))
		}
		switch {
		case !listed:
			remote = append(remote, c)
		case created:
			found = append(found, accountBase{c.account, c.height, "creation"})
		}
	}
	return found, remote
}

// addBaseCandidates notes a block's candidates (account updates caused by
// a receipt) and its deletions, from its changes' typed columns.
func (r *rowSet) addBaseCandidates(height int64, cols changeColumns) {
	type accountReceipt struct{ account, receipt string }
	keysOrCode := map[accountReceipt]bool{}
	for i, typ := range cols.types {
		if (typ == near.ChangeAccessKeyUpdate || typ == near.ChangeContractCodeUpdate) && cols.receipts[i] != nil {
			keysOrCode[accountReceipt{cols.accounts[i], *cols.receipts[i]}] = true
		}
	}
	for i, typ := range cols.types {
		switch {
		case typ == near.ChangeAccountDeletion:
			r.bases = append(r.bases, accountBase{cols.accounts[i], height, "deletion"})
		case typ == near.ChangeAccountUpdate && cols.causes[i] == "receipt_processing" && cols.receipts[i] != nil:
			receipt := *cols.receipts[i]
			r.baseCandidates = append(r.baseCandidates, baseCandidate{account: cols.accounts[i], height: height,
				receipt: receipt, keysOrCode: keysOrCode[accountReceipt{cols.accounts[i], receipt}]})
		}
	}
}

// findBases judges the batch's candidates once all its receipts are noted.
func (r *rowSet) findBases() {
	found, remote := judge(r.baseCandidates, r.receiptFacts)
	r.bases = append(r.bases, found...)
	r.remoteCandidates = remote
}

// recordBasesSQL records the bases found ($5..$7: account, height,
// source) and those of the candidates judged from the stored rows ($1..$4:
// account, height, receipt id, keysOrCode). Each candidate's receipt is
// looked up by its id; then each of their receipts' chunks has its action
// arrays read once (acts), not once per candidate: the arrays are
// decompressed for each read. The earliest base of an account wins;
// re-committing heights never moves it later.
const recordBasesSQL = `
WITH listed AS MATERIALIZED (
    -- The receipts by their ids alone: with receiver_id in the condition
    -- the planner ANDs in an index by receiver, whose matches grow with
    -- the account's history. A receipt is listed in a chunk at or below
    -- the height it runs at ($8, the highest candidate's): saying so
    -- prunes the partitions above. A query of its own, not a lateral
    -- join: receipts are distributed by height on a Citus archive. The
    -- accounts are named by number here and by name in cand: Citus
    -- refuses a join of the receipts with accounts in the transaction
    -- that copied both (25001).
    SELECT receipt_id, block_height, shard_id, index_in_chunk, predecessor, receiver
    FROM receipts_ids WHERE receipt_id = ANY($3::text[]) AND block_height <= $8
), cand AS MATERIALIZED (
    SELECT c.account_id, c.block_height, c.keys_or_code, r.block_height AS receipt_height, r.shard_id,
           r.index_in_chunk, p.name AS predecessor_id
    FROM unnest($1::text[], $2::bigint[], $3::text[], $4::boolean[]) AS c(account_id, block_height, receipt_id, keys_or_code)
    JOIN listed r ON r.receipt_id = c.receipt_id AND r.block_height <= c.block_height
    JOIN accounts v ON v.id = r.receiver AND v.name = c.account_id
    LEFT JOIN accounts p ON p.id = r.predecessor
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
    FROM (SELECT receipt_height, shard_id, index_in_chunk, account_id, block_height, keys_or_code,
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
               AND j.receipt_transfers_only AND j.keys_or_code))
    UNION ALL
    SELECT * FROM unnest($5::text[], $6::bigint[], $7::text[])
) found
ORDER BY account_id, block_height
ON CONFLICT (account_id) DO UPDATE
SET height = EXCLUDED.height, source = EXCLUDED.source
WHERE EXCLUDED.height < account_bases.height`

// recordBases records found and the bases of the remote candidates (none:
// no statement).
func recordBases(ctx context.Context, tx pgx.Tx, found []accountBase, remote []baseCandidate) error {
	if len(found) == 0 && len(remote) == 0 {
		return nil
	}
	var (
		cAccounts, cReceipts []string
		cHeights             []int64
		cKeys                []bool
		fAccounts, fSources  []string
		fHeights             []int64
	)
	var highest int64
	for _, c := range remote {
		cAccounts, cHeights, cReceipts, cKeys = append(cAccounts, c.account), append(cHeights, c.height), append(cReceipts, c.receipt), append(cKeys, c.keysOrCode)
		highest = max(highest, c.height)
	}
	for _, b := range found {
		fAccounts, fHeights, fSources = append(fAccounts, b.account), append(fHeights, b.height), append(fSources, b.source)
	}
	if _, err := tx.Exec(ctx, recordBasesSQL, cAccounts, cHeights, cReceipts, cKeys, fAccounts, fHeights, fSources, highest); err != nil {
		return fmt.Errorf("record account bases: %w", err)
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
