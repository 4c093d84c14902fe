package store

import (
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/jsonobject"
)

// The status family: each transaction's EXPERIMENTAL_tx_status, kept in its
// block's document (block_tx_statuses; its transaction left in its chunk,
// status_doc.go), its typed row (transaction_statuses) and its outcomes'
// (execution_outcomes, naming the transaction by its place in the block).

var statusTables = []table{
	outcomeTable,
	newTable(tableSpec{name: "transaction_statuses", heightColumn: "block_height", conflict: "ON CONFLICT DO NOTHING"},
		func(r *rowSet) []txStatusRow { return r.txStatuses },
		col("tx_hash", func(w *copyWriter, r *txStatusRow) { w.text(r.hash) }),
		col("signer_id", func(w *copyWriter, r *txStatusRow) { w.text(r.signer) }),
		col("block_height", func(w *copyWriter, r *txStatusRow) { w.int8(r.height) }),
		col("final_execution_status", func(w *copyWriter, r *txStatusRow) { w.text(r.final) }),
		col("index_in_block", func(w *copyWriter, r *txStatusRow) { w.int4(r.index) })),
	newTable(tableSpec{name: "block_tx_statuses", heightColumn: "block_height"}, func(r *rowSet) []statusDocRow { return r.statusDocs },
		col("block_height", func(w *copyWriter, r *statusDocRow) { w.int8(r.height) }),
		col("statuses", func(w *copyWriter, r *statusDocRow) { w.bytes(r.doc) })),
}

// outcomeTable holds the outcomes, their executor by number (migration
// 00020); UpdateTxStatus rewrites a status's.
var outcomeTable = newTable(tableSpec{name: "execution_outcomes_ids", heightColumn: "tx_block_height"},
	func(r *rowSet) []outcomeRow { return r.outcomes },
	col("id", func(w *copyWriter, r *outcomeRow) { w.text(r.id) }),
	col("block_height", func(w *copyWriter, r *outcomeRow) { w.int8(r.height) }),
	accountCol("executor", func(r *outcomeRow) string { return r.executor }),
	col("gas_burnt", func(w *copyWriter, r *outcomeRow) { w.int8(r.gasBurnt) }),
	col("tokens_burnt", func(w *copyWriter, r *outcomeRow) { w.numeric(r.tokensBurnt) }),
	col("failure", func(w *copyWriter, r *outcomeRow) { w.optText(r.failure) }),
	col("tx_block_height", func(w *copyWriter, r *outcomeRow) { w.int8(r.txHeight) }),
	col("tx_index", func(w *copyWriter, r *outcomeRow) { w.int4(r.txIndex) }),
	col("outcome_index", func(w *copyWriter, r *outcomeRow) { w.int4(r.index) }))

// The status family's rows.
type (
	txStatusRow struct {
		hash, signer, final string
		height              int64
		index               int32
	}
	statusDocRow struct {
		height int64
		doc    []byte // the block's statuses, packed
	}
	outcomeRow struct {
		id, executor     string
		height, gasBurnt int64
		tokensBurnt      numericValue
		failure          *string
		txHeight         int64
		txIndex, index   int32
	}
)

// packStatuses packs each block's statuses, compact where the batch's
// chunks hold their parts.
func (r *rowSet) packStatuses() {
	for _, b := range r.statusBlocks {
		r.statusDocs = append(r.statusDocs, statusDocRow{height: b.height, doc: r.parts.pack(r.codec, b)})
	}
}

// addTxStatus writes the transaction_statuses row of the status at index
// of its block's document and the typed rows of its outcomes.
func (r *rowSet) addTxStatus(height int64, index int, st *bundle.TxStatus) error {
	body, err := statusBody(st)
	if err != nil {
		return err
	}
	r.txStatuses = append(r.txStatuses, txStatusRow{hash: st.TxHash, signer: st.SignerID, height: height,
		final: body.FinalExecutionStatus, index: int32(index)})
	seen := make(map[string]bool, 1+len(body.ReceiptsOutcome))
	for i, o := range append([]*bundle.OutcomeFields{body.TransactionOutcome}, body.ReceiptsOutcome...) {
		if o == nil || seen[o.ID] { // absent or null; an outcome listed twice is one row
			continue
		}
		seen[o.ID] = true
		at := height
		if h, ok := st.BlockHeights[o.BlockHash]; ok {
			at = int64(h)
		}
		failure, err := outcomeFailure(o.Outcome.Status)
		if err != nil {
			return fmt.Errorf("status of outcome %s of tx %s: %w", o.ID, st.TxHash, err)
		}
		r.outcomes = append(r.outcomes, outcomeRow{id: o.ID, height: at, executor: o.Outcome.ExecutorID,
			gasBurnt: int64(o.Outcome.GasBurnt), tokensBurnt: numeric(o.Outcome.TokensBurnt), failure: failure,
			txHeight: height, txIndex: int32(index), index: int32(i)})
		if i > 0 { // receipts' outcomes: a transaction's logs nothing
			r.noteOutcome(height, at, int32(index), int32(i), o)
		}
	}
	return nil
}

// statusBody returns the typed part of a status: as the source decoded
// it, else decoded from its JSON.
func statusBody(st *bundle.TxStatus) (*bundle.TxStatusBody, error) {
	if st.Body != nil {
		return st.Body, nil
	}
	body := new(bundle.TxStatusBody)
	if err := json.Unmarshal(st.JSON, body); err != nil {
		return nil, fmt.Errorf("decode tx status %s: %w", st.TxHash, err)
	}
	return body, nil
}

// outcomeFailure returns the Failure member of an outcome's status, nil
// for any other status (execution_outcomes.failure).
func outcomeFailure(status json.RawMessage) (*string, error) {
	if len(status) == 0 || status[0] != '{' {
		return nil, nil // "Unknown", or absent
	}
	var failure *string
	err := jsonobject.Each(status, func(key string, value json.RawMessage) error {
		if key == "Failure" {
			s := string(value)
			failure = &s
		}
		return nil
	})
	return failure, err
}
