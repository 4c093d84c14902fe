package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nearline/nearline/near"
)

// Status answers `status`.
func (n *Node) Status(context.Context) (json.RawMessage, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	c := n.chain
	head := c.head()
	if head == nil {
		return nil, near.NotSyncedYet()
	}
	rfc := func(b *block) string {
		return time.Unix(0, int64(b.view.Header.Timestamp)).UTC().Format("2006-01-02T15:04:05.000000000Z")
	}
	var earliest *block
	for h := c.earliest(); h <= head.height && earliest == nil; h++ {
		earliest = c.byHeight[h]
	}
	eh, ehash, etime := earliest.height, earliest.hash, rfc(earliest)
	epochStart := head.epochStart
	epochID := head.epochID
	vals := make([]near.ValidatorInfoView, len(c.validators))
	for i, v := range c.validators {
		vals[i] = near.ValidatorInfoView{AccountID: v.account}
	}
	genesis := c.byHeight[c.cfg.GenesisHeight]
	rpcAddr := c.cfg.RPCAddr
	view := near.StatusView{
		Version:               near.NodeVersion{Version: "2.4.0", Build: "nearline-sim", Commit: "nearline-sim", RustcVersion: "1.82.0"},
		ChainID:               c.cfg.ChainID,
		ProtocolVersion:       c.layoutAt(head.height).protocol,
		LatestProtocolVersion: c.layoutAt(head.height).protocol,
		RPCAddr:               &rpcAddr,
		Validators:            vals,
		SyncInfo: near.StatusSyncInfo{
			LatestBlockHash: head.hash, LatestBlockHeight: head.height,
			LatestStateRoot: head.view.Header.PrevStateRoot, LatestBlockTime: rfc(head),
			EarliestBlockHash: &ehash, EarliestBlockHeight: &eh, EarliestBlockTime: &etime,
			EpochID: &epochID, EpochStartHeight: &epochStart,
		},
		NodePublicKey: publicKey(c.cfg.Seed, "sim-node", 0),
		UptimeSec:     int64(time.Since(n.started).Seconds()),
		GenesisHash:   genesis.hash,
	}
	b, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("encode status: %w", err)
	}
	return b, nil
}

// Health answers `health`: healthy once the first block exists.
func (n *Node) Health(context.Context) error {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.chain.head() == nil {
		return near.NotSyncedYet()
	}
	return nil
}

// Tx answers `tx` and, with receipts, `EXPERIMENTAL_tx_status`.
func (n *Node) Tx(_ context.Context, req near.TxRequest, withReceipts bool) (json.RawMessage, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	c := n.chain
	t := c.txs[req.TxHash]
	if t == nil || t.view.SignerID != req.SenderAccountID || c.gcd(t.height) {
		return nil, near.UnknownTransaction(req.TxHash)
	}
	view := near.FinalExecutionOutcomeView{
		Transaction:        t.view,
		TransactionOutcome: t.outcome,
		ReceiptsOutcome:    []near.ExecutionOutcomeWithIDView{},
	}
	if withReceipts {
		view.Receipts = []near.ReceiptView{}
	}
	// Outcomes in nearcore's order: depth first from the transaction's
	// receipt, each outcome before the receipts it created, in the order
	// of its receipt_ids (chain.rs get_recursive_transaction_results). An
	// unexecuted receipt ends its branch and leaves the status not final.
	done := true
	stack := []string{t.receiptID}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		r := c.receipts[id]
		if r == nil || !r.executed {
			done = false
			continue
		}
		view.ReceiptsOutcome = append(view.ReceiptsOutcome, r.outcome)
		if withReceipts { // refunds included, as nearcore lists them
			view.Receipts = append(view.Receipts, r.view)
		}
		for i := len(r.outcome.Outcome.ReceiptIDs) - 1; i >= 0; i-- {
			stack = append(stack, r.outcome.Outcome.ReceiptIDs[i])
		}
	}
	// Every block is final here: FINAL once every receipt ran, EXECUTED
	// once the outcome is known but refunds are still on their way, and
	// INCLUDED_FINAL while the transaction is still executing.
	view.Status = c.finalStatus(t.receiptID)
	switch {
	case view.Status == nil:
		view.Status = json.RawMessage(`"Started"`)
		view.FinalExecutionStatus = "INCLUDED_FINAL"
	case done:
		view.FinalExecutionStatus = "FINAL"
	default:
		view.FinalExecutionStatus = "EXECUTED"
	}
	b, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("encode tx status: %w", err)
	}
	return b, nil
}

// finalStatus follows SuccessReceiptId links from the transaction's receipt
// to the value or failure that ends it; nil while still running.
func (c *chain) finalStatus(id string) json.RawMessage {
	for range 64 {
		r := c.receipts[id]
		if r == nil || !r.executed {
			return nil
		}
		var next struct {
			SuccessReceiptID *string `json:"SuccessReceiptId"`
		}
		if json.Unmarshal(r.outcome.Outcome.Status, &next) == nil && next.SuccessReceiptID != nil {
			id = *next.SuccessReceiptID
			continue
		}
		return r.outcome.Outcome.Status
	}
	return nil
}

// Validators answers `validators` for [null], null, {}, [block_id],
// {"block_id": ...} or {"epoch_id": ...}: that epoch (default the head's),
// counted up to its last block so far. An unknown block or epoch is
// UNKNOWN_EPOCH.
// Receipt answers `EXPERIMENTAL_receipt`: a receipt a chunk carried (data
// receipts included) or the chain created, unless garbage-collected.
func (n *Node) Receipt(_ context.Context, receiptID string) (json.RawMessage, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	c := n.chain
	var view near.ReceiptView
	if place, ok := c.receiptChunks[receiptID]; ok && !c.gcd(place.chunk.height) {
		view = place.chunk.view.Receipts[place.index]
	} else if r := c.receipts[receiptID]; r != nil && !(r.executed && c.gcd(r.height)) {
		view = r.view
	} else {
		return nil, near.UnknownReceipt(receiptID)
	}
	out, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("encode receipt %s: %w", receiptID, err)
	}
	return out, nil
}

// ReceiptToTx answers `EXPERIMENTAL_receipt_to_tx` for a receipt the chain
// created from a transaction.
func (n *Node) ReceiptToTx(_ context.Context, receiptID string) (*near.ReceiptToTxView, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	c := n.chain
	r := c.receipts[receiptID]
	if r == nil || r.txHash == "" || (r.executed && c.gcd(r.height)) {
		return nil, near.UnknownReceipt(receiptID)
	}
	t := c.txs[r.txHash]
	if t == nil {
		return nil, near.UnknownReceipt(receiptID)
	}
	return &near.ReceiptToTxView{TransactionHash: r.txHash, SenderAccountID: t.view.SignerID}, nil
}

func (n *Node) Validators(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	c := n.chain
	if c.head() == nil {
		return nil, near.NotSyncedYet()
	}
	trimmed := bytes.TrimSpace(params)
	var arr []json.RawMessage
	var obj struct {
		BlockID json.RawMessage `json:"block_id"`
		EpochID *string         `json:"epoch_id"`
	}
	var idRaw json.RawMessage
	switch {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
	case trimmed[0] == '[' && json.Unmarshal(trimmed, &arr) == nil && len(arr) == 1:
		idRaw = arr[0]
	case trimmed[0] == '{' && json.Unmarshal(trimmed, &obj) == nil:
		idRaw = obj.BlockID
	default:
		return nil, near.ParseError("Failed parsing args: expected [block_id], [null], {\"block_id\": ...} or {\"epoch_id\": ...}")
	}
	b := c.head()
	switch {
	case obj.EpochID != nil:
		b = nil
		for _, blk := range c.blocks { // the epoch's last block so far
			if blk.epochID == *obj.EpochID {
				b = blk
			}
		}
	case len(idRaw) > 0 && !bytes.Equal(bytes.TrimSpace(idRaw), []byte("null")):
		var id near.BlockID
		if err := json.Unmarshal(idRaw, &id); err != nil {
			return nil, near.ParseError("Failed parsing args: " + err.Error())
		}
		b, _ = c.lookup(near.BlockReference{BlockID: &id})
	}
	if b == nil || c.gcd(b.height) {
		return nil, near.HandlerError("UNKNOWN_EPOCH", nil, "Epoch not found")
	}
	view := c.epochValidators(b)
	out, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("encode validators: %w", err)
	}
	return out, nil
}

func (c *chain) epochValidators(b *block) near.EpochValidatorInfo {
	nv := len(c.validators)
	layout := c.layoutAt(b.height)
	shards := len(layout.ids)
	type counts struct {
		expB, prodB uint64
		expC, prodC []uint64
	}
	cs := make([]counts, nv)
	for i := range cs {
		cs[i].expC = make([]uint64, shards)
		cs[i].prodC = make([]uint64, shards)
	}
	for h := b.epochStart; h <= b.height; h++ {
		p := int(h % uint64(nv))
		cs[p].expB++
		blk := c.byHeight[h]
		if blk != nil {
			cs[p].prodB++
		}
		for s := 0; s < shards; s++ {
			cp := (int(h) + s) % nv
			cs[cp].expC[s]++
			if blk != nil && blk.view.Header.ChunkMask[s] {
				cs[cp].prodC[s]++
			}
		}
	}
	allShards := layout.ids
	sum := func(v []uint64) uint64 {
		t := uint64(0)
		for _, x := range v {
			t += x
		}
		return t
	}
	out := near.EpochValidatorInfo{
		CurrentFishermen: []near.ValidatorStakeView{}, NextFishermen: []near.ValidatorStakeView{},
		CurrentProposals: []near.ValidatorStakeView{}, PrevEpochKickout: []near.ValidatorKickoutView{},
		EpochStartHeight: b.epochStart, EpochHeight: (b.epochStart-c.cfg.GenesisHeight)/c.cfg.EpochLength + 1,
	}
	// Proposals of the epoch so far, the last one per account.
	last := map[string]int{}
	for h := b.epochStart; h <= b.height; h++ {
		blk := c.byHeight[h]
		if blk == nil {
			continue
		}
		for _, raw := range blk.view.Header.ValidatorProposals {
			var p near.ValidatorStakeView
			if json.Unmarshal(raw, &p) != nil {
				continue
			}
			if i, ok := last[p.AccountID]; ok {
				out.CurrentProposals[i] = p
				continue
			}
			last[p.AccountID] = len(out.CurrentProposals)
			out.CurrentProposals = append(out.CurrentProposals, p)
		}
	}
	for i, v := range c.validators {
		stake := v.stake
		if acc := c.st.accountAt(v.account, b.height); acc != nil {
			stake = acc.Locked
		}
		out.CurrentValidators = append(out.CurrentValidators, near.CurrentEpochValidatorInfo{
			AccountID: v.account, PublicKey: v.key, Stake: stake, Shards: allShards,
			NumProducedBlocks: cs[i].prodB, NumExpectedBlocks: cs[i].expB,
			NumProducedChunks: sum(cs[i].prodC), NumExpectedChunks: sum(cs[i].expC),
			NumProducedChunksPerShard: cs[i].prodC, NumExpectedChunksPerShard: cs[i].expC,
			NumProducedEndorsements: sum(cs[i].prodC) * uint64(nv), NumExpectedEndorsements: sum(cs[i].expC) * uint64(nv),
			NumProducedEndorsementsPerShard: scale(cs[i].prodC, nv), NumExpectedEndorsementsPerShard: scale(cs[i].expC, nv),
		})
		out.NextValidators = append(out.NextValidators, near.NextEpochValidatorInfo{AccountID: v.account, PublicKey: v.key, Stake: stake, Shards: allShards})
	}
	return out
}

func scale(v []uint64, m int) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = x * uint64(m)
	}
	return out
}
