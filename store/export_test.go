package store

import (
	"context"
	"fmt"
	"math/big"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/near"
)

// MigrateTo applies the embedded migrations up to version, for tests of
// upgrades from an older layout.
var MigrateTo = migrateTo

// Statements of the read path, for their plans on Citus.
const (
	AccountAtSQL = accountAtSQL
	DataAtSQL    = dataAtSQL
	TxStatusSQL  = txStatusSQL
	ReceiptSQL   = receiptSQL
	// ReceiptStatusSQL: a receipt no chunk carries, from its status.
	ReceiptStatusSQL = receiptStatusSQL
)

// PartitionedTables are the block-keyed tables the store creates height-range
// partitions for.
var PartitionedTables = partitionedTables

// RecordBasesFromRows derives the account bases of heights lo..hi from
// the stored rows alone, as Commit did before it judged candidates in Go:
// every candidate and deletion read from state_changes, every candidate
// judged by recordBasesSQL.
func (s *Store) RecordBasesFromRows(ctx context.Context, lo, hi int64) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT sc.account_id, sc.block_height, sc.change_type = 'account_deletion',
				coalesce(sc.cause_receipt_hash, ''),
				EXISTS (SELECT 1 FROM state_changes k
				        WHERE k.block_height = sc.block_height AND k.account_id = sc.account_id
				          AND k.cause_receipt_hash = sc.cause_receipt_hash
				          AND k.change_type IN ('access_key_update', 'contract_code_update'))
			FROM state_changes sc
			WHERE sc.block_height BETWEEN $1 AND $2
			  AND (sc.change_type = 'account_deletion' OR (sc.change_type = 'account_update'
			       AND sc.cause_type = 'receipt_processing' AND sc.cause_receipt_hash IS NOT NULL))`, lo, hi)
		if err != nil {
			return err
		}
		var found []accountBase
		var remote []baseCandidate
		var c baseCandidate
		var deletion bool
		_, err = pgx.ForEachRow(rows, []any{&c.account, &c.height, &deletion, &c.receipt, &c.keysOrCode}, func() error {
			if deletion {
				found = append(found, accountBase{c.account, c.height, "deletion"})
			} else {
				remote = append(remote, c)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return recordBases(ctx, tx, found, remote)
	})
}

// GlobalContractCodeAt returns the global contract code id names as it was
// on shard after the block at height, counting only distributions to that
// shard (one window of GlobalContractCodeIn).
func (s *Store) GlobalContractCodeAt(ctx context.Context, id near.GlobalContractID, shard uint64, height uint64) ([]byte, string, error) {
	return s.GlobalContractCodeIn(ctx, id, []ShardWindow{{Target: shard, Exec: shard, To: height}})
}

// StateAtSQL is view_state's query, for its plan.
const StateAtSQL = stateAtSQL

// InternAccounts numbers names (distinct, sorted) in tx, as a write does.
func InternAccounts(ctx context.Context, tx pgx.Tx, names []string) (map[string]int32, error) {
	return internAccounts(ctx, tx, names)
}

// CopyIn is the store's binary COPY of rows of any values (each written
// as appendCopyValue writes it), for its agreement with pgx's.
func CopyIn(ctx context.Context, tx pgx.Tx, table string, columns []string, rows [][]any) (int64, error) {
	return copyIn(ctx, tx, table, columns, anyRows(rows), nil)
}

// anyRows are rows of any values in their columns' order.
type anyRows [][]any

func (r anyRows) len() int              { return len(r) }
func (r anyRows) accounts(func(string)) {}

func (r anyRows) encode(w *copyWriter, i int) {
	if len(r[i]) != len(w.oids) {
		w.keep(nil, fmt.Errorf("%d values for %d columns", len(r[i]), len(w.oids)))
		return
	}
	for k, v := range r[i] {
		w.col = k
		w.value(v)
	}
}

// NumericOf is v as the rows hold a numeric value: encoded by CopyIn
// itself when it fits 128 bits.
func NumericOf(v *big.Int) any { return numericOfBig(v) }

// NumericArrayOf is vs as the rows hold an array of numeric values, a nil
// element NULL.
func NumericArrayOf(vs []*big.Int) any {
	out := make([]numericValue, len(vs))
	for i, v := range vs {
		out[i] = numericOfBig(v).small
	}
	return out
}
