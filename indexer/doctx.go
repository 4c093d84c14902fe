package indexer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/nearline/nearline/store"
)

// assemble builds tx's EXPERIMENTAL_tx_status from the documents of blocks
// d.height..upto, as nearcore's view client does from its store: the
// outcomes depth first from the transaction's, each before the receipts
// it created in the order of its receipt_ids (chain.rs
// get_recursive_transaction_results), `receipts` the executed receipts in
// the same order, `status` found by following SuccessReceiptId links. A
// receipt with no outcome up to upto ends its branch; the status is FINAL
// once every receipt has one, EXECUTED once the status is known, else
// INCLUDED_FINAL with status "Started" (as the RPC source stores it, and
// revisits it).
func (s *DocSource) assemble(ctx context.Context, d *parsedDoc, tx docTx, upto uint64) (store.TxStatus, bool, error) {
	st := store.TxStatus{TxHash: tx.hash, SignerID: tx.signerID, BlockHeights: map[string]uint64{}}
	if tx.outcome.blockHash != "" {
		st.BlockHeights[tx.outcome.blockHash] = d.height
	}
	var outcomes, receipts []json.RawMessage
	found := map[string]docOutcome{}
	done := true
	stack := slices.Clone(tx.outcome.receiptIDs)
	slices.Reverse(stack)
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		o, at, ok, err := s.findOutcome(ctx, d, id, upto)
		if err != nil {
			return store.TxStatus{}, false, fmt.Errorf("status of tx %s: %w", tx.hash, err)
		}
		if !ok {
			done = false
			continue
		}
		found[id] = o
		outcomes = append(outcomes, o.raw)
		if len(o.receipt) > 0 && string(o.receipt) != "null" {
			receipts = append(receipts, o.receipt)
		}
		if o.blockHash != "" {
			st.BlockHeights[o.blockHash] = at
		}
		for i := len(o.receiptIDs) - 1; i >= 0; i-- {
			stack = append(stack, o.receiptIDs[i])
		}
	}
	status := finalStatus(tx.outcome, found)
	execution := "INCLUDED_FINAL"
	switch {
	case status == nil:
		status = json.RawMessage(`"Started"`)
	case done:
		execution = "FINAL"
	default:
		execution = "EXECUTED"
	}
	// Members in the order near.FinalExecutionOutcomeView has them;
	// receipts omitted when empty, as it does.
	members := []member{
		{"final_execution_status", json.RawMessage(`"` + execution + `"`)},
		{"status", status},
		{"transaction", tx.raw},
		{"transaction_outcome", tx.outcome.raw},
		{"receipts_outcome", writeArray(outcomes)},
	}
	if len(receipts) > 0 {
		members = append(members, member{"receipts", writeArray(receipts)})
	}
	st.JSON = writeObject(members)
	return st, execution == "FINAL", nil
}

// findOutcome looks for receipt id's outcome in the documents of blocks
// d.height..upto, in order, fetching those not read yet; ok is false when
// none has it (or a document is not there yet).
func (s *DocSource) findOutcome(ctx context.Context, d *parsedDoc, id string, upto uint64) (docOutcome, uint64, bool, error) {
	if o, ok := d.outcomes[id]; ok {
		return o, d.height, true, nil
	}
	for h := d.height + 1; h <= upto; h++ {
		s.readAhead(ctx, h, upto)
		doc, err := s.load(ctx, h)
		if errors.Is(err, ErrNoDocument) {
			return docOutcome{}, 0, false, nil
		}
		if err != nil {
			return docOutcome{}, 0, false, err
		}
		if doc == nil {
			continue // skipped height
		}
		if o, ok := doc.outcomes[id]; ok {
			return o, h, true, nil
		}
	}
	return docOutcome{}, 0, false, nil
}

// readAhead fetches, at once, the documents from height on (ReadAhead of
// them, no further than upto) when the one at height is not fetched yet:
// a receipt that executes blocks later costs a round trip per ReadAhead
// blocks, not per block. Every document is one the indexer fetches anyway
// (upto is at most the final head), and each is fetched once. Errors are
// left to the loads that need the documents.
func (s *DocSource) readAhead(ctx context.Context, height, upto uint64) {
	s.mu.Lock()
	_, known := s.entries[height]
	s.mu.Unlock()
	if known {
		return
	}
	var wg sync.WaitGroup
	for h := height; h <= min(height+uint64(s.cfg.ReadAhead)-1, upto); h++ {
		wg.Go(func() { _, _ = s.load(ctx, h) })
	}
	wg.Wait()
}

// finalStatus follows SuccessReceiptId links from the transaction's
// outcome to the value or failure that ends it; nil while still running.
func finalStatus(txOutcome docOutcome, found map[string]docOutcome) json.RawMessage {
	status := txOutcome.status
	for range 1000 {
		var next struct {
			SuccessReceiptID *string `json:"SuccessReceiptId"`
		}
		if json.Unmarshal(status, &next) != nil || next.SuccessReceiptID == nil {
			return bytes.Clone(status)
		}
		o, ok := found[*next.SuccessReceiptID]
		if !ok {
			return nil
		}
		status = o.status
	}
	return nil
}
