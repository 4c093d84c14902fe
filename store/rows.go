package store

import (
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/packed"
	"github.com/nearline/nearline/near"
)

// rowSet holds the rows of a batch, per table, in COPY column order.
type rowSet struct {
	blocks, skipped, blockChunks, chunks, transactions, receipts, actions [][]any
	outcomes, txStatuses, stateChanges, blockEffects                      [][]any
	accounts, accessKeys, data, codeHistory, codes, protocols, epochs     [][]any
	olderChunks, globalDistributions, changeDocs, statusDocs              [][]any
	codec                                                                 *packed.Codec
	seenCodes, seenProtocols, seenOlder                                   map[string]bool
	// epochFirst is the lowest height of each epoch in the batch: the
	// height a protocol config is recorded at, whichever of the epoch's
	// blocks (fetched concurrently) happened to carry it.
	epochFirst map[string]int64
	// unknown counts variants stored verbatim but not modelled, by kind.
	unknown map[string]int
	// events says whether the explorer tables' rows (ex) are built.
	events bool
	ex     explorerRows
}

func newRowSet(codec *packed.Codec) *rowSet {
	return &rowSet{codec: codec, seenCodes: map[string]bool{}, seenProtocols: map[string]bool{}, seenOlder: map[string]bool{},
		epochFirst: map[string]int64{}, unknown: map[string]int{}, ex: explorerRows{blockTimes: map[int64]time.Time{}}}
}

func numeric(v near.U128) pgtype.Numeric {
	return pgtype.Numeric{Int: v.Big(), Valid: true}
}

func numeric64(v uint64) pgtype.Numeric {
	return pgtype.Numeric{Int: new(big.Int).SetUint64(v), Valid: true}
}

// jsonText returns raw when set, else v encoded.
func jsonText(raw json.RawMessage, v any) (string, error) {
	if len(raw) > 0 {
		return string(raw), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func (r *rowSet) addBundle(b *bundle.Bundle) error {
	h := b.Block.Header
	height := int64(h.Height)
	blockJSON, err := jsonText(b.BlockJSON, b.Block)
	if err != nil {
		return fmt.Errorf("encode block %d: %w", h.Height, err)
	}
	if _, ok := r.epochFirst[h.EpochID]; !ok {
		r.epochFirst[h.EpochID] = height // bundles come in ascending order
	}
	var prevHeight *int64
	if h.PrevHeight != nil {
		p := int64(*h.PrevHeight)
		prevHeight = &p
	}
	blockTime := time.Unix(0, int64(h.Timestamp)).UTC()
	r.ex.blockTimes[height] = blockTime
	r.blocks = append(r.blocks, []any{height, h.Hash, h.PrevHash, prevHeight, h.EpochID, b.Block.Author,
		int64(h.Timestamp), blockTime, numeric(h.GasPrice), numeric(h.TotalSupply),
		int32(h.LatestProtocolVersion), int32(h.ChunksIncluded), blockJSON})
	for _, s := range b.Skipped {
		r.skipped = append(r.skipped, []any{int64(s), height})
	}
	if b.ShardIDs != nil && len(b.ShardIDs) != len(b.Block.Chunks) {
		return fmt.Errorf("block %d: %d shard ids for %d chunks", h.Height, len(b.ShardIDs), len(b.Block.Chunks))
	}
	for i, c := range b.Block.Chunks {
		shard := c.ShardID
		if b.ShardIDs != nil {
			shard = b.ShardIDs[i] // the layout's shard at this index (a child repeating its parent's chunk)
		}
		r.blockChunks = append(r.blockChunks, []any{height, int32(shard), c.ChunkHash, int64(c.HeightIncluded)})
	}
	for i := range b.Chunks {
		if err := r.addChunk(height, &b.Chunks[i]); err != nil {
			return err
		}
	}
	for i := range b.OlderChunks {
		if err := r.addOlderChunk(&b.OlderChunks[i]); err != nil {
			return err
		}
	}
	for i, e := range b.Effects {
		r.blockEffects = append(r.blockEffects, []any{height, int32(i), e.AccountID, e.Type})
	}
	changes, err := r.addChanges(height, b.Changes)
	if err != nil {
		return err
	}
	if len(changes) > 0 {
		r.changeDocs = append(r.changeDocs, []any{height, r.codec.Pack(changes)})
	}
	if len(b.TxStatuses) > 0 {
		docs := make([]json.RawMessage, len(b.TxStatuses))
		for i := range b.TxStatuses {
			if err := r.addTxStatus(height, i, &b.TxStatuses[i]); err != nil {
				return err
			}
			docs[i] = b.TxStatuses[i].JSON
		}
		r.statusDocs = append(r.statusDocs, []any{height, r.codec.Pack(docs)})
	}
	if pc := b.ProtocolConfig; pc != nil {
		r.epochs = append(r.epochs, []any{pc.EpochID, int32(pc.ProtocolVersion)})
		key := fmt.Sprint(pc.ProtocolVersion)
		if !r.seenProtocols[key] {
			r.seenProtocols[key] = true
			first := height
			if f, ok := r.epochFirst[pc.EpochID]; ok && f < first {
				first = f
			}
			r.protocols = append(r.protocols, []any{int32(pc.ProtocolVersion), first, string(pc.JSON)})
		}
	}
	return nil
}

func (r *rowSet) addOlderChunk(c *bundle.Chunk) error {
	v := c.View
	hdr := v.Header
	if r.seenOlder[hdr.ChunkHash] {
		return nil
	}
	r.seenOlder[hdr.ChunkHash] = true
	chunkJSON, err := jsonText(c.JSON, v)
	if err != nil {
		return fmt.Errorf("encode chunk %s: %w", hdr.ChunkHash, err)
	}
	r.olderChunks = append(r.olderChunks, []any{hdr.ChunkHash, int64(hdr.HeightIncluded), int32(hdr.ShardID), v.Author,
		int64(hdr.HeightCreated), int64(hdr.GasUsed), int64(hdr.GasLimit), numeric(hdr.BalanceBurnt),
		int32(len(v.Transactions)), int32(len(v.Receipts)), chunkJSON})
	return nil
}

func (r *rowSet) addChunk(height int64, c *bundle.Chunk) error {
	v := c.View
	hdr := v.Header
	chunkJSON, err := jsonText(c.JSON, v)
	if err != nil {
		return fmt.Errorf("encode chunk %s: %w", hdr.ChunkHash, err)
	}
	shard := int32(hdr.ShardID)
	r.chunks = append(r.chunks, []any{hdr.ChunkHash, height, shard, v.Author, int64(hdr.HeightCreated),
		int64(hdr.GasUsed), int64(hdr.GasLimit), numeric(hdr.BalanceBurnt), int32(len(v.Transactions)),
		int32(len(v.Receipts)), chunkJSON})
	for i, tx := range v.Transactions {
		r.transactions = append(r.transactions, []any{hdr.ChunkHash, int32(i), tx.Hash, height, shard, tx.SignerID,
			tx.PublicKey, numeric64(tx.Nonce), tx.ReceiverID, numeric64(tx.PriorityFee), int32(len(tx.Actions))})
		r.addTxActivity(height, shard, i, tx.Hash, tx.SignerID, tx.ReceiverID)
		p := actionParent{chunkHash: hdr.ChunkHash, shard: shard, kind: "transaction", index: i, height: height, txHash: &tx.Hash, signer: tx.SignerID}
		if err := r.addActions(p, tx.Actions); err != nil {
			return err
		}
	}
	for i, rc := range v.Receipts {
		kind, signer := rc.Receipt.Kind(), (*string)(nil)
		dist, isDist, err := rc.Receipt.GlobalDistribution()
		if err != nil {
			return fmt.Errorf("receipt %s in chunk %s: %w", rc.ReceiptID, hdr.ChunkHash, err)
		}
		switch {
		case isDist:
			r.addGlobalDistribution(height, shard, i, rc, dist)
		case rc.Receipt.Other != nil:
			r.unknown["receipt:"+kind]++ // stored as it came, in the chunk's view
		}
		if act := rc.Receipt.Action; act != nil {
			s := act.SignerID
			signer = &s
			r.addReceiptActivity(height, shard, i, rc.ReceiptID, rc.PredecessorID, rc.ReceiverID)
			id := rc.ReceiptID
			p := actionParent{chunkHash: hdr.ChunkHash, shard: shard, kind: "receipt", index: i, height: height, receiptID: &id, signer: act.SignerID}
			if err := r.addActions(p, act.Actions); err != nil {
				return err
			}
		}
		r.receipts = append(r.receipts, []any{hdr.ChunkHash, int32(i), rc.ReceiptID, height, shard,
			rc.PredecessorID, rc.ReceiverID, kind, signer})
	}
	return nil
}

// addGlobalDistribution records a GlobalContractDistribution receipt and
// keeps the code it carries.
func (r *rowSet) addGlobalDistribution(height int64, shard int32, index int, rc near.ReceiptView, d near.GlobalContractDistribution) {
	hash := near.HashOf(d.Code).String()
	r.addCode(hash, d.Code)
	var nonce *int64
	if d.Nonce != nil {
		n := int64(*d.Nonce)
		nonce = &n
	}
	r.globalDistributions = append(r.globalDistributions, []any{rc.ReceiptID, height, shard, int32(index),
		int32(d.TargetShard), d.ID.Kind(), d.ID.Value(), hash, rc.PredecessorID, nonce})
}

// actionParent is the transaction or action receipt whose actions are
// being stored.
type actionParent struct {
	chunkHash         string
	shard             int32
	kind              string // "transaction" or "receipt"
	index             int    // its index_in_chunk
	height            int64
	txHash, receiptID *string
	signer            string // who pays: the relayer of a Delegate
}

// delegation is what an action's row says about a meta-transaction: the
// relayer who paid, the user who acted, and for a nested action the
// action_index of its Delegate (nil otherwise).
type delegation struct {
	by, sender  string
	parentIndex *int32
}

// addActions stores a parent's actions, then the actions nested in its
// Delegate actions, numbered after its own, each naming its Delegate.
func (r *rowSet) addActions(p actionParent, actions []near.ActionView) error {
	next := len(actions)
	for j, a := range actions {
		var d *delegation
		if a.Delegate != nil {
			d = &delegation{by: p.signer, sender: a.Delegate.DelegateAction.SenderID}
		}
		row, err := r.actionRow(p, j, a, d)
		if err != nil {
			return err
		}
		r.actions = append(r.actions, row)
	}
	for j, a := range actions {
		if a.Delegate == nil {
			continue
		}
		parent := int32(j)
		d := &delegation{by: p.signer, sender: a.Delegate.DelegateAction.SenderID, parentIndex: &parent}
		for _, nested := range a.Delegate.DelegateAction.Actions {
			row, err := r.actionRow(p, next, nested, d)
			if err != nil {
				return err
			}
			r.actions = append(r.actions, row)
			next++
		}
	}
	return nil
}

func (r *rowSet) actionRow(p actionParent, index int, a near.ActionView, d *delegation) ([]any, error) {
	chunkHash, shard, parentKind, parent, height := p.chunkHash, p.shard, p.kind, p.index, p.height
	if a.Other != nil {
		r.unknown["action:"+a.Kind()]++ // stored as it came, in detail
	}
	var (
		method, publicKey, beneficiary, codeHash *string
		gas                                      *int64
		deposit                                  *pgtype.Numeric
		args                                     []byte
		// typed: every member of the action is in a typed column (or,
		// for code, in contract_codes), so detail stays NULL.
		typed = true
	)
	deploy := func(d *near.DeployContractAction) {
		h := near.HashOf(d.Code).String()
		r.addCode(h, d.Code)
		codeHash = &h
	}
	switch {
	case a.CreateAccount:
	case a.FunctionCall != nil:
		method = &a.FunctionCall.MethodName
		g := int64(a.FunctionCall.Gas)
		gas = &g
		d := numeric(a.FunctionCall.Deposit)
		deposit = &d
		args = a.FunctionCall.Args
		if args == nil {
			args = []byte{}
		}
	case a.Transfer != nil:
		d := numeric(a.Transfer.Deposit)
		deposit = &d
	case a.Stake != nil:
		d := numeric(a.Stake.Stake)
		deposit = &d
		publicKey = &a.Stake.PublicKey
	case a.AddKey != nil:
		publicKey = &a.AddKey.PublicKey
		typed = false // the key's permission
	case a.DeleteKey != nil:
		publicKey = &a.DeleteKey.PublicKey
	case a.DeleteAccount != nil:
		beneficiary = &a.DeleteAccount.BeneficiaryID
	case a.DeployContract != nil:
		deploy(a.DeployContract)
	case a.DeployGlobalContract != nil:
		deploy(a.DeployGlobalContract)
	case a.DeployGlobalContractByAccountID != nil:
		deploy(a.DeployGlobalContractByAccountID)
	case a.UseGlobalContract != nil:
		codeHash = &a.UseGlobalContract.CodeHash
	case a.Delegate != nil:
		publicKey = &a.Delegate.DelegateAction.PublicKey
		typed = false // nonce, max_block_height, signature; nested actions have rows too
	default:
		typed = false
	}
	var detail *string
	if !typed {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode action %d of %s %d in chunk %s: %w", index, parentKind, parent, chunkHash, err)
		}
		text := string(b)
		detail = &text
	}
	var by, sender *string
	var parentIndex *int32
	if d != nil {
		by, sender, parentIndex = &d.by, &d.sender, d.parentIndex
	}
	return []any{chunkHash, shard, parentKind, int32(parent), int32(index), height, p.txHash, p.receiptID, a.Kind(),
		method, gas, deposit, publicKey, beneficiary, args, codeHash, detail, parentIndex, by, sender}, nil
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
			r.addOutcomeEvents(height, at, st.TxHash, o)
		}
	}
	return nil
}
