package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// TxRef names a stored transaction status.
type TxRef struct {
	TxHash   string
	SignerID string
	Height   uint64 // height of the block including the transaction
}

// PendingTxStatuses returns up to limit stored statuses that were not FINAL
// when fetched, included at or below maxHeight, oldest first.
func (s *Store) PendingTxStatuses(ctx context.Context, maxHeight uint64, limit int) ([]TxRef, error) {
	rows, _ := s.pool.Query(ctx, `SELECT tx_hash, signer_id, block_height FROM transaction_statuses
		WHERE final_execution_status <> 'FINAL' AND block_height <= $1
		ORDER BY block_height, tx_hash LIMIT $2`, int64(maxHeight), limit)
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (TxRef, error) {
		var r TxRef
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

// UpdateTxStatus replaces a stored status and its execution outcomes with a
// newer answer, in one transaction.
func (s *Store) UpdateTxStatus(ctx context.Context, ref TxRef, st TxStatus) error {
	rows := newRowSet()
	if err := rows.addTxStatus(int64(ref.Height), &st); err != nil {
		return fmt.Errorf("update tx status: %w", err)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM execution_outcomes WHERE tx_hash = $1 AND tx_block_height = $2`,
			ref.TxHash, int64(ref.Height)); err != nil {
			return fmt.Errorf("clear outcomes of %s: %w", ref.TxHash, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM transaction_statuses WHERE tx_hash = $1 AND signer_id = $2`,
			ref.TxHash, ref.SignerID); err != nil {
			return fmt.Errorf("clear status of %s: %w", ref.TxHash, err)
		}
		for _, t := range tables {
			if t.name == "transaction_statuses" || t.name == "execution_outcomes" {
				if _, err := copyRows(ctx, tx, t, t.rows(rows)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update status of tx %s: %w", ref.TxHash, err)
	}
	return nil
}
