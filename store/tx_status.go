package store

import (
	"bytes"
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/nearline/nearline/bundle"
)

// PendingTxStatuses returns up to limit stored statuses that were not FINAL
// when fetched, included at or below maxHeight, oldest first.
func (s *Store) PendingTxStatuses(ctx context.Context, maxHeight uint64, limit int) ([]bundle.TxRef, error) {
	rows, _ := s.pool.Query(ctx, `SELECT tx_hash, signer_id, block_height FROM transaction_statuses
		WHERE final_execution_status <> 'FINAL' AND block_height <= $1
		ORDER BY block_height, tx_hash LIMIT $2`, int64(maxHeight), limit)
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (bundle.TxRef, error) {
		var r bundle.TxRef
		var h int64
		err := row.Scan(&r.TxHash, &r.SignerID, &h)
		r.Height = uint64(h)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read pending tx statuses: %w", err)
	}
	return refs, nil
}

// UpdateTxStatus replaces a stored status (in its block's document) and its
// execution outcomes with a newer answer, in one transaction. The status is
// kept compact when its stored chunk holds its transaction, as a commit
// keeps it.
func (s *Store) UpdateTxStatus(ctx context.Context, ref bundle.TxRef, st bundle.TxStatus) error {
	var skipped explorerRows // the event logs and activity rows not written, logged after
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var (
			height int64
			index  int32
			doc    []byte
		)
		err := tx.QueryRow(ctx, `SELECT s.block_height, s.index_in_block, d.statuses
			FROM transaction_statuses s JOIN block_tx_statuses d ON d.block_height = s.block_height
			WHERE s.tx_hash = $1 AND s.signer_id = $2 AND s.block_height = $3
			FOR UPDATE OF d`, ref.TxHash, ref.SignerID, int64(ref.Height)).Scan(&height, &index, &doc)
		if err != nil {
			return notFound(err, "status of "+ref.TxHash)
		}
		statuses, err := s.codec.Unpack(doc)
		if err != nil {
			return fmt.Errorf("statuses of block %d: %w", height, err)
		}
		if int(index) >= len(statuses) {
			return fmt.Errorf("status %d of block %d: the block has %d", index, height, len(statuses))
		}
		parts, err := s.storedParts(ctx, tx, height, ref.TxHash)
		if err != nil {
			return err
		}
		statuses[index] = bytes.Join(parts.compact(height, ref.TxHash, st.JSON), nil)
		rows := newRowSet(s.codec)
		rows.events = s.events
		if err := rows.addTxStatus(height, int(index), &st); err != nil {
			return err
		}
		rows.addEvents()
		skipped.malformed, skipped.unplaced = rows.ex.malformed, rows.ex.unplaced
		if _, err := tx.Exec(ctx, `DELETE FROM execution_outcomes_ids WHERE tx_block_height = $1 AND tx_index = $2`,
			height, index); err != nil {
			return fmt.Errorf("clear outcomes of %s: %w", ref.TxHash, err)
		}
		body, err := statusBody(&st)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE transaction_statuses SET final_execution_status = $3
			WHERE block_height = $1 AND index_in_block = $2`, height, index, body.FinalExecutionStatus); err != nil {
			return fmt.Errorf("update status row of %s: %w", ref.TxHash, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE block_tx_statuses SET statuses = $2 WHERE block_height = $1`,
			height, s.codec.Pack(statuses)); err != nil {
			return fmt.Errorf("update statuses of block %d: %w", height, err)
		}
		// The outcomes and the events name accounts: interned once, as
		// a commit does.
		written := []table{outcomeTable}
		if s.events {
			written = append(written, explorerTables...)
		}
		ids, err := internTables(ctx, tx, written, rows)
		if err != nil {
			return err
		}
		if _, err := copyRows(ctx, tx, outcomeTable, rows, ids); err != nil {
			return err
		}
		if s.events {
			return replaceTxEvents(ctx, tx, height, index, rows, ids)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update status of tx %s: %w", ref.TxHash, err)
	}
	s.logMalformed(&skipped)
	return nil
}
