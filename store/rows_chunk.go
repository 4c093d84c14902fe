package store

import (
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
)

// The chunk family: chunks (the view as served, packed, and its actions'
// typed columns as arrays: the view actions has a row per action),
// transactions, receipts and the global contract distributions receipts
// carry.

// actionArrayColumns are the chunks columns holding its actions' typed
// columns, one element per action (migration 00014), in actionArrays'
// order.
var actionArrayColumns = []string{"action_parent_kinds", "action_parent_indexes", "action_indexes", "action_kinds",
	"action_method_names", "action_gas", "action_deposits", "action_public_keys", "action_beneficiary_ids",
	"action_code_hashes", "action_details", "action_delegate_parent_indexes", "action_delegated_bys",
	"action_delegate_sender_ids"}

var chunkTables = []table{
	{name: "chunks", heightColumn: "block_height", rows: func(r *rowSet) [][]any { return r.chunks },
		columns: append([]string{"chunk_hash", "block_height", "shard_id", "author", "height_created", "gas_used",
			"gas_limit", "balance_burnt", "tx_count", "receipt_count", "doc"}, actionArrayColumns...)},
	{name: "chunks", rows: func(r *rowSet) [][]any { return r.olderChunks }, conflict: "ON CONFLICT (chunk_hash, block_height) DO NOTHING",
		columns: []string{"chunk_hash", "block_height", "shard_id", "author", "height_created", "gas_used",
			"gas_limit", "balance_burnt", "tx_count", "receipt_count", "doc"}},
	// Transactions and receipts hold accounts by number (migration 00020).
	{name: "transactions_ids", heightColumn: "block_height", named: true, rows: func(r *rowSet) [][]any { return r.transactions },
		columns: []string{"index_in_chunk", "hash", "block_height", "shard_id", "signer",
			"public_key", "nonce", "receiver", "priority_fee", "action_count"}},
	{name: "receipts_ids", heightColumn: "block_height", named: true, rows: func(r *rowSet) [][]any { return r.receipts },
		columns: []string{"index_in_chunk", "receipt_id", "block_height", "shard_id",
			"predecessor", "receiver", "kind", "signer"}},
	{name: "global_contract_distributions", heightColumn: "block_height", rows: func(r *rowSet) [][]any { return r.globalDistributions },
		columns: []string{"receipt_id", "block_height", "shard_id", "index_in_chunk", "target_shard", "identifier_kind",
			"identifier", "code_hash", "deployer_id", "nonce"}},
}

func (r *rowSet) addOlderChunk(c *bundle.Chunk) error {
	v := &c.View
	hdr := v.Header
	if r.seenOlder[hdr.ChunkHash] {
		return nil
	}
	r.seenOlder[hdr.ChunkHash] = true
	chunkJSON, err := rawJSON(c.JSON, v)
	if err != nil {
		return fmt.Errorf("encode chunk %s: %w", hdr.ChunkHash, err)
	}
	r.olderChunks = append(r.olderChunks, r.chunkRow(int64(hdr.HeightIncluded), v, chunkJSON))
	return nil
}

func (r *rowSet) addChunk(height int64, c *bundle.Chunk) error {
	v := &c.View
	hdr := v.Header
	chunkJSON, err := rawJSON(c.JSON, v)
	if err != nil {
		return fmt.Errorf("encode chunk %s: %w", hdr.ChunkHash, err)
	}
	shard := int32(hdr.ShardID)
	r.parts.addChunk(height, shard, chunkJSON, v)
	var acts actionArrays
	for i, tx := range v.Transactions {
		r.transactions = append(r.transactions, []any{int32(i), tx.Hash, height, shard, accountName(tx.SignerID),
			tx.PublicKey, numeric64(tx.Nonce), accountName(tx.ReceiverID), numeric64(tx.PriorityFee), int32(len(tx.Actions))})
		p := actionParent{chunkHash: hdr.ChunkHash, kind: "transaction", index: i, signer: tx.SignerID}
		if err := r.addActions(&acts, p, tx.Actions); err != nil {
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
		facts := receiptFacts{height: height, predecessor: rc.PredecessorID, receiver: rc.ReceiverID, transfersOnly: true}
		if act := rc.Receipt.Action; act != nil {
			s := act.SignerID
			signer = &s
			p := actionParent{chunkHash: hdr.ChunkHash, kind: "receipt", index: i, signer: act.SignerID}
			first := len(acts.kinds)
			if err := r.addActions(&acts, p, act.Actions); err != nil {
				return err
			}
			for k := first; k < len(acts.kinds); k++ {
				facts.creates = facts.creates || (acts.kinds[k] == "CreateAccount" && acts.delegateParents[k] == nil)
				facts.transfersOnly = facts.transfersOnly && acts.kinds[k] == "Transfer"
			}
		}
		r.receiptFacts[rc.ReceiptID] = append(r.receiptFacts[rc.ReceiptID], facts)
		r.labels.add(labelReceiptKind, kind)
		r.receipts = append(r.receipts, []any{int32(i), rc.ReceiptID, height, shard,
			accountName(rc.PredecessorID), accountName(rc.ReceiverID), kind, optAccount(signer)})
	}
	r.chunks = append(r.chunks, append(r.chunkRow(height, v, chunkJSON), acts.values()...))
	return nil
}

// chunkRow is a chunks row: the typed header columns and the chunk as
// served, in a packed document of one value.
func (r *rowSet) chunkRow(height int64, v *near.ChunkView, chunkJSON json.RawMessage) []any {
	hdr := v.Header
	return []any{hdr.ChunkHash, height, int32(hdr.ShardID), v.Author, int64(hdr.HeightCreated),
		int64(hdr.GasUsed), int64(hdr.GasLimit), numeric(hdr.BalanceBurnt), int32(len(v.Transactions)),
		int32(len(v.Receipts)), r.codec.Pack([]json.RawMessage{chunkJSON})}
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
	chunkHash string // for errors
	kind      string // "transaction" or "receipt"
	index     int    // its index_in_chunk
	signer    string // who pays: the relayer of a Delegate
}

// delegation is what an action's row says about a meta-transaction: the
// relayer who paid, the user who acted, and for a nested action the
// action_index of its Delegate (nil otherwise).
type delegation struct {
	by, sender  string
	parentIndex *int32
}

// addActions adds a parent's actions to its chunk's, then the actions
// nested in its Delegate actions, numbered after its own, each naming its
// Delegate.
func (r *rowSet) addActions(acts *actionArrays, p actionParent, actions []near.ActionView) error {
	next := len(actions)
	for j, a := range actions {
		var d *delegation
		if a.Delegate != nil {
			d = &delegation{by: p.signer, sender: a.Delegate.DelegateAction.SenderID}
		}
		if err := r.addAction(acts, p, j, a, d); err != nil {
			return err
		}
	}
	for j, a := range actions {
		if a.Delegate == nil {
			continue
		}
		parent := int32(j)
		d := &delegation{by: p.signer, sender: a.Delegate.DelegateAction.SenderID, parentIndex: &parent}
		for _, nested := range a.Delegate.DelegateAction.Actions {
			if err := r.addAction(acts, p, next, nested, d); err != nil {
				return err
			}
			next++
		}
	}
	return nil
}

// actionArrays are a chunk's actions' typed columns, one element per
// action (the chunks columns actionArrayColumns).
type actionArrays struct {
	parentKinds, kinds                                                    []string
	parentIndexes, indexes                                                []int32
	methods, publicKeys, beneficiaries, codeHashes, details, bys, senders []*string
	gas                                                                   []*int64
	deposits                                                              []numericValue
	delegateParents                                                       []*int32
}

// values are the arrays in actionArrayColumns' order; NULLs for a chunk
// without actions (an empty array takes ~20 bytes, a NULL a bit: 14 of
// them on each of a quiet chain's chunk rows).
func (a *actionArrays) values() []any {
	if len(a.kinds) == 0 {
		return make([]any, len(actionArrayColumns))
	}
	return []any{a.parentKinds, a.parentIndexes, a.indexes, a.kinds, a.methods, a.gas, a.deposits, a.publicKeys,
		a.beneficiaries, a.codeHashes, a.details, a.delegateParents, a.bys, a.senders}
}

func (r *rowSet) addAction(acts *actionArrays, p actionParent, index int, a near.ActionView, d *delegation) error {
	chunkHash, parentKind, parent := p.chunkHash, p.kind, p.index
	if a.Other != nil {
		r.unknown["action:"+a.Kind()]++ // stored as it came, in detail
	}
	var (
		method, publicKey, beneficiary, codeHash *string
		gas                                      *int64
		deposit                                  numericValue
		// typed: every member of the action is in a typed column, in
		// contract_codes (code) or only in the chunk's document (a
		// call's arguments, a Delegate's nonce, max_block_height and
		// signature), so detail stays NULL.
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
		deposit = numeric(a.FunctionCall.Deposit)
	case a.Transfer != nil:
		deposit = numeric(a.Transfer.Deposit)
	case a.Stake != nil:
		deposit = numeric(a.Stake.Stake)
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
		publicKey = &a.Delegate.DelegateAction.PublicKey // nested actions have rows of their own
	default:
		typed = false
	}
	var detail *string
	if !typed {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encode action %d of %s %d in chunk %s: %w", index, parentKind, parent, chunkHash, err)
		}
		text := string(b)
		detail = &text
	}
	var by, sender *string
	var parentIndex *int32
	if d != nil {
		by, sender, parentIndex = &d.by, &d.sender, d.parentIndex
	}
	r.labels.add(labelActionKind, a.Kind())
	acts.parentKinds = append(acts.parentKinds, parentKind)
	acts.parentIndexes = append(acts.parentIndexes, int32(parent))
	acts.indexes = append(acts.indexes, int32(index))
	acts.kinds = append(acts.kinds, a.Kind())
	acts.methods = append(acts.methods, method)
	acts.gas = append(acts.gas, gas)
	acts.deposits = append(acts.deposits, deposit)
	acts.publicKeys = append(acts.publicKeys, publicKey)
	acts.beneficiaries = append(acts.beneficiaries, beneficiary)
	acts.codeHashes = append(acts.codeHashes, codeHash)
	acts.details = append(acts.details, detail)
	acts.delegateParents = append(acts.delegateParents, parentIndex)
	acts.bys = append(acts.bys, by)
	acts.senders = append(acts.senders, sender)
	return nil
}
