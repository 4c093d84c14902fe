package store

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
)

// The chunk family: chunks (the view as served, packed, and its actions'
// typed columns as arrays: the view actions has a row per action),
// transactions, receipts and the global contract distributions receipts
// carry.

// chunkColumns are the chunks columns of a chunk's header and its view,
// and actionColumns those holding its actions' typed columns, one element
// per action (migration 00014); a chunk without actions has NULLs there
// (an empty array takes ~20 bytes, a NULL a bit: 14 of them on each of a
// quiet chain's chunk rows), and so has an older chunk, whose actions
// belong to a block before the archive.
var (
	chunkColumns = []column[chunkRow]{
		col("chunk_hash", func(w *copyWriter, r *chunkRow) { w.text(r.hash) }),
		col("block_height", func(w *copyWriter, r *chunkRow) { w.int8(r.height) }),
		col("shard_id", func(w *copyWriter, r *chunkRow) { w.int4(r.shard) }),
		col("author", func(w *copyWriter, r *chunkRow) { w.text(r.author) }),
		col("height_created", func(w *copyWriter, r *chunkRow) { w.int8(r.created) }),
		col("gas_used", func(w *copyWriter, r *chunkRow) { w.int8(r.gasUsed) }),
		col("gas_limit", func(w *copyWriter, r *chunkRow) { w.int8(r.gasLimit) }),
		col("balance_burnt", func(w *copyWriter, r *chunkRow) { w.numeric(r.burnt) }),
		col("tx_count", func(w *copyWriter, r *chunkRow) { w.int4(r.txCount) }),
		col("receipt_count", func(w *copyWriter, r *chunkRow) { w.int4(r.receiptCount) }),
		col("doc", func(w *copyWriter, r *chunkRow) { w.bytes(r.doc) }),
	}
	actionColumns = []column[chunkRow]{
		col("action_parent_kinds", func(w *copyWriter, r *chunkRow) { w.texts(r.acts.parentKinds) }),
		col("action_parent_indexes", func(w *copyWriter, r *chunkRow) { w.int4s(r.acts.parentIndexes) }),
		col("action_indexes", func(w *copyWriter, r *chunkRow) { w.int4s(r.acts.indexes) }),
		col("action_kinds", func(w *copyWriter, r *chunkRow) { w.texts(r.acts.kinds) }),
		col("action_method_names", func(w *copyWriter, r *chunkRow) { w.optTexts(r.acts.methods) }),
		col("action_gas", func(w *copyWriter, r *chunkRow) { w.optInt8s(r.acts.gas) }),
		col("action_deposits", func(w *copyWriter, r *chunkRow) { w.numerics(r.acts.deposits) }),
		col("action_public_keys", func(w *copyWriter, r *chunkRow) { w.optTexts(r.acts.publicKeys) }),
		col("action_beneficiary_ids", func(w *copyWriter, r *chunkRow) { w.optTexts(r.acts.beneficiaries) }),
		col("action_code_hashes", func(w *copyWriter, r *chunkRow) { w.optTexts(r.acts.codeHashes) }),
		col("action_details", func(w *copyWriter, r *chunkRow) { w.optTexts(r.acts.details) }),
		col("action_delegate_parent_indexes", func(w *copyWriter, r *chunkRow) { w.optInt4s(r.acts.delegateParents) }),
		col("action_delegated_bys", func(w *copyWriter, r *chunkRow) { w.optTexts(r.acts.bys) }),
		col("action_delegate_sender_ids", func(w *copyWriter, r *chunkRow) { w.optTexts(r.acts.senders) }),
	}
)

var chunkTables = []table{
	newTable(tableSpec{name: "chunks", heightColumn: "block_height"}, func(r *rowSet) []chunkRow { return r.chunks },
		slices.Concat(chunkColumns, actionColumns)...),
	newTable(tableSpec{name: "chunks", conflict: "ON CONFLICT (chunk_hash, block_height) DO NOTHING"},
		func(r *rowSet) []chunkRow { return r.olderChunks }, chunkColumns...),
	// Transactions and receipts hold accounts by number (migration 00020).
	newTable(tableSpec{name: "transactions_ids", heightColumn: "block_height"}, func(r *rowSet) []txRow { return r.transactions },
		col("index_in_chunk", func(w *copyWriter, r *txRow) { w.int4(r.index) }),
		col("hash", func(w *copyWriter, r *txRow) { w.text(r.hash) }),
		col("block_height", func(w *copyWriter, r *txRow) { w.int8(r.height) }),
		col("shard_id", func(w *copyWriter, r *txRow) { w.int4(r.shard) }),
		accountCol("signer", func(r *txRow) string { return r.signer }),
		col("public_key", func(w *copyWriter, r *txRow) { w.text(r.publicKey) }),
		col("nonce", func(w *copyWriter, r *txRow) { w.numeric(r.nonce) }),
		accountCol("receiver", func(r *txRow) string { return r.receiver }),
		col("priority_fee", func(w *copyWriter, r *txRow) { w.numeric(r.priorityFee) }),
		col("action_count", func(w *copyWriter, r *txRow) { w.int4(r.actions) })),
	newTable(tableSpec{name: "receipts_ids", heightColumn: "block_height"}, func(r *rowSet) []receiptRow { return r.receipts },
		col("index_in_chunk", func(w *copyWriter, r *receiptRow) { w.int4(r.index) }),
		col("receipt_id", func(w *copyWriter, r *receiptRow) { w.text(r.id) }),
		col("block_height", func(w *copyWriter, r *receiptRow) { w.int8(r.height) }),
		col("shard_id", func(w *copyWriter, r *receiptRow) { w.int4(r.shard) }),
		accountCol("predecessor", func(r *receiptRow) string { return r.predecessor }),
		accountCol("receiver", func(r *receiptRow) string { return r.receiver }),
		col("kind", func(w *copyWriter, r *receiptRow) { w.text(r.kind) }),
		optAccountCol("signer", func(r *receiptRow) *string { return r.signer })),
	newTable(tableSpec{name: "global_contract_distributions", heightColumn: "block_height"},
		func(r *rowSet) []distributionRow { return r.globalDistributions },
		col("receipt_id", func(w *copyWriter, r *distributionRow) { w.text(r.receiptID) }),
		col("block_height", func(w *copyWriter, r *distributionRow) { w.int8(r.height) }),
		col("shard_id", func(w *copyWriter, r *distributionRow) { w.int4(r.shard) }),
		col("index_in_chunk", func(w *copyWriter, r *distributionRow) { w.int4(r.index) }),
		col("target_shard", func(w *copyWriter, r *distributionRow) { w.int4(r.target) }),
		col("identifier_kind", func(w *copyWriter, r *distributionRow) { w.text(r.idKind) }),
		col("identifier", func(w *copyWriter, r *distributionRow) { w.text(r.id) }),
		col("code_hash", func(w *copyWriter, r *distributionRow) { w.text(r.codeHash) }),
		col("deployer_id", func(w *copyWriter, r *distributionRow) { w.text(r.deployer) }),
		col("nonce", func(w *copyWriter, r *distributionRow) { w.optInt8(r.nonce) })),
}

// The chunk family's rows.
type (
	chunkRow struct {
		hash, author                       string
		height, created, gasUsed, gasLimit int64
		shard, txCount, receiptCount       int32
		burnt                              numericValue
		doc                                []byte // the chunk as served, packed
		acts                               actionArrays
	}
	txRow struct {
		index, shard, actions int32
		hash, publicKey       string
		height                int64
		signer, receiver      string
		nonce, priorityFee    numericValue
	}
	receiptRow struct {
		index, shard          int32
		id, kind              string
		height                int64
		predecessor, receiver string
		signer                *string
	}
	distributionRow struct {
		receiptID                      string
		height                         int64
		shard, index, target           int32
		idKind, id, codeHash, deployer string
		nonce                          *int64
	}
)

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
		r.transactions = append(r.transactions, txRow{index: int32(i), hash: tx.Hash, height: height, shard: shard,
			signer: tx.SignerID, publicKey: tx.PublicKey, nonce: numeric64(tx.Nonce), receiver: tx.ReceiverID,
			priorityFee: numeric64(tx.PriorityFee), actions: int32(len(tx.Actions))})
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
		r.receipts = append(r.receipts, receiptRow{index: int32(i), id: rc.ReceiptID, height: height, shard: shard,
			predecessor: rc.PredecessorID, receiver: rc.ReceiverID, kind: kind, signer: signer})
	}
	row := r.chunkRow(height, v, chunkJSON)
	row.acts = acts
	r.chunks = append(r.chunks, row)
	return nil
}

// chunkRow is a chunks row without its actions: the typed header columns
// and the chunk as served, in a packed document of one value.
func (r *rowSet) chunkRow(height int64, v *near.ChunkView, chunkJSON json.RawMessage) chunkRow {
	hdr := v.Header
	return chunkRow{hash: hdr.ChunkHash, height: height, shard: int32(hdr.ShardID), author: v.Author,
		created: int64(hdr.HeightCreated), gasUsed: int64(hdr.GasUsed), gasLimit: int64(hdr.GasLimit),
		burnt: numeric(hdr.BalanceBurnt), txCount: int32(len(v.Transactions)), receiptCount: int32(len(v.Receipts)),
		doc: r.codec.Pack([]json.RawMessage{chunkJSON})}
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
	r.globalDistributions = append(r.globalDistributions, distributionRow{receiptID: rc.ReceiptID, height: height,
		shard: shard, index: int32(index), target: int32(d.TargetShard), idKind: d.ID.Kind(), id: d.ID.Value(),
		codeHash: hash, deployer: rc.PredecessorID, nonce: nonce})
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
// action (the chunks columns actionColumns); all nil for a chunk without
// actions.
type actionArrays struct {
	parentKinds, kinds                                                    []string
	parentIndexes, indexes                                                []int32
	methods, publicKeys, beneficiaries, codeHashes, details, bys, senders []*string
	gas                                                                   []*int64
	deposits                                                              []numericValue
	delegateParents                                                       []*int32
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
