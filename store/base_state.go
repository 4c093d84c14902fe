package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/nearline/nearline/bundle"
)

// PutBaseState writes state known at height without a block's changes: the
// genesis records (at the genesis height) or a snapshot of accounts (at the
// snapshot height). changes use the change types of EXPERIMENTAL_changes
// (account_update, access_key_update, data_update, contract_code_update);
// only the state history and contract code tables are written, upserted, in
// one transaction, so loading the same state twice changes nothing.
func (s *Store) PutBaseState(ctx context.Context, height uint64, changes []bundle.StateChange) error {
	rows := newRowSet(s.codec)
	if _, _, err := rows.addChangeRows(int64(height), changes); err != nil {
		return fmt.Errorf("put base state at %d: %w", height, err)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return copyBaseRows(ctx, tx, rows)
	})
	if err != nil {
		return fmt.Errorf("put base state at %d: %w", height, err)
	}
	return nil
}

// copyBaseRows writes the state history and contract code rows of rows.
func copyBaseRows(ctx context.Context, tx pgx.Tx, rows *rowSet) error {
	var written []table
	for _, t := range tables {
		switch t.spec().name {
		case "account_history_ids", "access_key_history_ids", "contract_data_history_ids", "contract_code_history_ids", "contract_codes":
			written = append(written, t)
		}
	}
	ids, err := internTables(ctx, tx, written, rows)
	if err != nil {
		return err
	}
	for _, t := range written {
		if _, err := copyRows(ctx, tx, t, rows, ids); err != nil {
			return err
		}
	}
	return nil
}
