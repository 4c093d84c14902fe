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
	{name: "transaction_statuses", heightColumn: "block_height", conflict: "ON CONFLICT DO NOTHING",
		rows:    func(r *rowSet) [][]any { return r.txStatuses },
		columns: []string{"tx_hash", "signer_id", "block_height", "final_execution_status", "index_in_block"}},
	{name: "block_tx_statuses", heightColumn: "block_height", rows: func(r *rowSet) [][]any { return r.statusDocs },
		columns: []string{"block_height", "statuses"}},
}

// outcomeTable holds the outcomes, their executor by number (migration
// 00020); UpdateTxStatus rewrites a status's.
var outcomeTable = table{name: "execution_outcomes_ids", heightColumn: "tx_block_height", named: true,
	rows: func(r *rowSet) [][]any { return r.outcomes },
	columns: []string{"id", "block_height", "executor", "gas_burnt", "tokens_burnt", "failure",
		"tx_block_height", "tx_index", "outcome_index"}}

// packStatuses packs each block's statuses, compact where the batch's
// chunks hold their parts.
func (r *rowSet) packStatuses() {
	for _, b := range r.statusBlocks {
		r.statusDocs = append(r.statusDocs, []any{b.height, r.parts.pack(r.codec, b)})
	}
}

// addTxStatus writes the transaction_statuses row of the status at index
// of its block's document and the typed rows of its outcomes.
func (r *rowSet) addTxStatus(height int64, index int, st *bundle.TxStatus) error {
	body, err := statusBody(st)
	if err != nil {
		return err
	}
	r.txStatuses = append(r.txStatuses, []any{st.TxHash, st.SignerID, height, body.FinalExecutionStatus, int32(index)})
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
		r.outcomes = append(r.outcomes, []any{o.ID, at, accountName(o.Outcome.ExecutorID), int64(o.Outcome.GasBurnt),
			numeric(o.Outcome.TokensBurnt), failure, height, int32(index), int32(i)})
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
