package store

import (
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/bundle"
)

// The status family: each transaction's EXPERIMENTAL_tx_status, kept as
// served in its block's document (block_tx_statuses), its typed row
// (transaction_statuses) and its outcomes' (execution_outcomes).

var statusTables = []table{
	{name: "execution_outcomes", heightColumn: "tx_block_height", conflict: "ON CONFLICT DO NOTHING",
		rows: func(r *rowSet) [][]any { return r.outcomes },
		columns: []string{"id", "block_height", "executor_id", "gas_burnt", "tokens_burnt", "status",
			"tx_hash", "tx_block_height"}},
	{name: "transaction_statuses", heightColumn: "block_height", conflict: "ON CONFLICT DO NOTHING",
		rows:    func(r *rowSet) [][]any { return r.txStatuses },
		columns: []string{"tx_hash", "signer_id", "block_height", "final_execution_status", "index_in_block"}},
	{name: "block_tx_statuses", heightColumn: "block_height", rows: func(r *rowSet) [][]any { return r.statusDocs },
		columns: []string{"block_height", "statuses"}},
}

// addTxStatus writes the transaction_statuses row of the status at index
// of its block's document and the typed rows of its outcomes.
func (r *rowSet) addTxStatus(height int64, index int, st *bundle.TxStatus) error {
	body := st.Body
	if body == nil {
		body = new(bundle.TxStatusBody)
		if err := json.Unmarshal(st.JSON, body); err != nil {
			return fmt.Errorf("decode tx status %s: %w", st.TxHash, err)
		}
	}
	r.txStatuses = append(r.txStatuses, []any{st.TxHash, st.SignerID, height, body.FinalExecutionStatus, int32(index)})
	for i, o := range append([]*bundle.OutcomeFields{body.TransactionOutcome}, body.ReceiptsOutcome...) {
		if o == nil { // absent or null
			continue
		}
		at := height
		if h, ok := st.BlockHeights[o.BlockHash]; ok {
			at = int64(h)
		}
		status := string(o.Outcome.Status)
		if status == "" {
			status = "null"
		}
		r.outcomes = append(r.outcomes, []any{o.ID, at, o.Outcome.ExecutorID, int64(o.Outcome.GasBurnt),
			numeric(o.Outcome.TokensBurnt), status, st.TxHash, height})
		if i > 0 { // receipts' outcomes: a transaction's logs nothing
			r.noteOutcome(height, at, st.TxHash, o)
		}
	}
	return nil
}
