package docsource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/jsonobject"
)

// txProgress is what is known of a transaction's execution: the outcomes of
// its receipts found so far and the first block whose document was not
// searched yet. A receipt not found up to there executes later: a receipt
// runs at or after the block of the one that created it, and the children
// of every outcome found were looked for when it was.
type txProgress struct {
	height uint64 // the transaction's block
	tx     docTx
	found  map[string]foundOutcome
	next   uint64
	// docs are the documents tx and found are parts of.
	docs []*parsedDoc
}

type foundOutcome struct {
	outcome docOutcome
	height  uint64
}

func newTxProgress(d *parsedDoc, tx docTx) *txProgress {
	return &txProgress{height: d.height, tx: tx, found: map[string]foundOutcome{}, next: d.height, docs: []*parsedDoc{d}}
}

// assemble builds the transaction's EXPERIMENTAL_tx_status from what p
// found and the documents of blocks p.next..upto, as nearcore's view
// client does from its store: the outcomes depth first from the
// transaction's, each before the receipts it created in the order of its
// receipt_ids (chain.rs get_recursive_transaction_results), `receipts` the
// executed receipts in the same order, `status` found by following
// SuccessReceiptId links. A receipt with no outcome up to upto ends its
// branch; the status is FINAL once every receipt has one, EXECUTED once
// the status is known, else INCLUDED_FINAL with status "Started" (as the
// RPC source stores it, and revisits it). p.next moves past upto.
func (s *Source) assemble(ctx context.Context, p *txProgress, upto uint64) (bundle.TxStatus, bool, error) {
	tx := p.tx
	st := bundle.TxStatus{TxHash: tx.hash, SignerID: tx.signerID, BlockHeights: map[string]uint64{}}
	if tx.outcome.blockHash != "" {
		st.BlockHeights[tx.outcome.blockHash] = p.height
	}
	var outcomes, receipts []json.RawMessage
	body := &bundle.TxStatusBody{TransactionOutcome: tx.outcome.fields}
	done := true
	end := upto + 1 // documents p.next..end-1 are searched
	stack := slices.Clone(tx.outcome.receiptIDs)
	slices.Reverse(stack)
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		f, ok, err := s.findOutcome(ctx, p, id, &end)
		if err != nil {
			return bundle.TxStatus{}, false, fmt.Errorf("status of tx %s: %w", tx.hash, err)
		}
		if !ok {
			done = false
			continue
		}
		o := f.outcome
		outcomes = append(outcomes, o.raw)
		body.ReceiptsOutcome = append(body.ReceiptsOutcome, o.fields)
		if len(o.receipt) > 0 && string(o.receipt) != "null" {
			receipts = append(receipts, o.receipt)
		}
		if o.blockHash != "" {
			st.BlockHeights[o.blockHash] = f.height
		}
		for i := len(o.receiptIDs) - 1; i >= 0; i-- {
			stack = append(stack, o.receiptIDs[i])
		}
	}
	p.next = max(p.next, end)
	status := finalStatus(tx.outcome, p.found)
	execution := "INCLUDED_FINAL"
	switch {
	case status == nil:
		status = json.RawMessage(`"Started"`)
	case done:
		execution = "FINAL"
	default:
		execution = "EXECUTED"
	}
	st.JSON = statusJSON(execution, status, tx.raw, tx.outcome.raw, outcomes, receipts)
	// What the store would decode of st.JSON, from the outcomes as they
	// were decoded with their documents.
	body.FinalExecutionStatus = execution
	st.Body = body
	return st, execution == "FINAL", nil
}

// statusJSON is a status as served, written in one buffer: its members
// in the order near.FinalExecutionOutcomeView has them, receipts omitted
// when there are none, as it does.
func statusJSON(execution string, status, tx, txOutcome json.RawMessage, outcomes, receipts []json.RawMessage) json.RawMessage {
	size := 128 + len(execution) + len(status) + len(tx) + len(txOutcome)
	for _, o := range outcomes {
		size += len(o) + 1
	}
	for _, r := range receipts {
		size += len(r) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, `{"final_execution_status":"`...)
	out = append(out, execution...)
	out = append(out, `","status":`...)
	out = append(out, status...)
	out = append(out, `,"transaction":`...)
	out = append(out, tx...)
	out = append(out, `,"transaction_outcome":`...)
	out = append(out, txOutcome...)
	out = append(out, `,"receipts_outcome":`...)
	out = jsonobject.AppendArray(out, outcomes)
	if len(receipts) > 0 {
		out = append(out, `,"receipts":`...)
		out = jsonobject.AppendArray(out, receipts)
	}
	return append(out, '}')
}

// findOutcome returns receipt id's outcome from what p found, or looks for
// it in the documents of blocks p.next..*end-1, in order, fetching those
// not read yet; ok is false when none has it. A document that is not there
// yet ends the search, and *end moves down to it.
func (s *Source) findOutcome(ctx context.Context, p *txProgress, id string, end *uint64) (foundOutcome, bool, error) {
	if f, ok := p.found[id]; ok {
		return f, true, nil
	}
	for h := p.next; h < *end; h++ {
		s.readAhead(ctx, h, *end-1)
		doc, err := s.load(ctx, h)
		if errors.Is(err, ErrNoDocument) {
			*end = h
			return foundOutcome{}, false, nil
		}
		if err != nil {
			return foundOutcome{}, false, err
		}
		if doc == nil {
			continue // skipped height
		}
		if o, ok := doc.outcomes[id]; ok {
			f := foundOutcome{outcome: o, height: h}
			p.found[id] = f
			if !slices.Contains(p.docs, doc) {
				p.docs = append(p.docs, doc)
			}
			return f, true, nil
		}
	}
	return foundOutcome{}, false, nil
}

// readAhead fetches, at once, the documents from height on (ReadAhead of
// them, no further than upto) when the one at height is not fetched yet:
// a receipt that executes blocks later costs a round trip per ReadAhead
// blocks, not per block. Every document is one the indexer fetches anyway
// (upto is at most the final head), and each is fetched once. Errors are
// left to the loads that need the documents.
func (s *Source) readAhead(ctx context.Context, height, upto uint64) {
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
func finalStatus(txOutcome docOutcome, found map[string]foundOutcome) json.RawMessage {
	status := txOutcome.status
	for range 1000 {
		var next struct {
			SuccessReceiptID *string `json:"SuccessReceiptId"`
		}
		if fastjson.Unmarshal(status, &next) != nil || next.SuccessReceiptID == nil {
			return bytes.Clone(status)
		}
		f, ok := found[*next.SuccessReceiptID]
		if !ok {
			return nil
		}
		status = f.outcome.status
	}
	return nil
}
