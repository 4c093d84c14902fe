package docsource

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

// parsedDoc is a block document taken apart into what a Bundle and the
// transaction statuses are built from.
type parsedDoc struct {
	height uint64
	hash   string
	raw    json.RawMessage // the block view as served
	block  near.BlockView
	// chunks are the chunks included in this block by shard id, as the
	// `chunk` method serves them.
	chunks map[uint64]bundle.Chunk
	// txs are each new chunk's transactions with their outcomes, by shard
	// id.
	txs map[uint64][]docTx
	// shardIDs are the document's shard ids in its order: the shard ids
	// of the block's layout, by index.
	shardIDs []uint64
	// outcomes are the receipts executed in this block, by receipt id.
	outcomes map[string]docOutcome
	// effects and changes are EXPERIMENTAL_changes_in_block and the
	// EXPERIMENTAL_changes answers, as rpcsource.Source collects them.
	effects []near.StateChangeKindView
	changes []bundle.StateChange
	// buf is the fetcher's buffer the document's parts are slices of, nil
	// when it is in none.
	buf *docBuffer
}

// docBuffer is a document's buffer (BlockDocument.body), given back to
// its fetcher once (released) unless it must never be (pinned): all a
// bundle keeps to release it, not its document.
type docBuffer struct {
	body  []byte
	state atomic.Int32 // bufHeld, bufReleased or bufPinned
}

// The states of a docBuffer.
const (
	bufHeld int32 = iota
	bufReleased
	bufPinned
)

// release gives b's buffer back to r, unless it is pinned or was given
// back already.
func (b *docBuffer) release(r recycler) {
	if b.state.CompareAndSwap(bufHeld, bufReleased) {
		r.recycle(b.body)
	}
}

// pin keeps b from being given back, and reports whether it is still held
// (false: it was given back, and its document must not be read). A nil
// docBuffer (a document in no pool's buffer) is always held.
func (b *docBuffer) pin() bool {
	if b == nil {
		return true
	}
	b.state.CompareAndSwap(bufHeld, bufPinned)
	return b.state.Load() == bufPinned
}

// isReleased reports whether b was given back.
func (b *docBuffer) isReleased() bool { return b != nil && b.state.Load() == bufReleased }

// recycler is a Fetcher whose documents' buffers may be reused once
// nothing reads them.
type recycler interface {
	recycle(body []byte)
}

// docTx is a transaction of a chunk and its outcome.
type docTx struct {
	hash, signerID string
	raw            json.RawMessage // SignedTransactionView
	outcome        docOutcome
}

// docOutcome is an execution outcome (ExecutionOutcomeWithIdView) and, for
// a receipt, the receipt: raw and receipt as served, the members the
// statuses are assembled from and fields, the typed columns of its
// execution_outcomes row (nil for a null outcome), decoded once.
type docOutcome struct {
	raw        json.RawMessage
	receipt    json.RawMessage
	id         string
	blockHash  string
	receiptIDs []string
	status     json.RawMessage
	fields     *bundle.OutcomeFields
}

func parseOutcome(raw json.RawMessage) (docOutcome, error) {
	f := new(bundle.OutcomeFields)
	if err := decodeOutcomeFields(raw, f); err != nil {
		return docOutcome{}, fmt.Errorf("decode execution outcome: %w", err)
	}
	d := docOutcome{raw: raw, id: f.ID, blockHash: f.BlockHash, receiptIDs: f.Outcome.ReceiptIDs, status: f.Outcome.Status}
	if string(raw) != "null" {
		d.fields = f
	}
	return d, nil
}

// parseDocument takes a document apart. Unknown members are kept where the
// RPC answers carry them (block view, chunk header, transactions,
// outcomes, receipts and state changes stay as served). Each part is
// decoded once: the block and chunk views and the state changes into
// their types, the outcomes into what statuses are assembled from.
func parseDocument(d *BlockDocument) (*parsedDoc, error) {
	// The outcomes' map and the changes' list are sized once, not grown
	// (a mainnet block has about 300 outcomes and a thousand changes, and
	// a docChange holds a whole decoded view).
	executed, total := 0, 0
	for _, sh := range d.Shards {
		executed += len(sh.ReceiptExecutionOutcomes)
		total += len(sh.StateChanges)
	}
	p := &parsedDoc{raw: d.Block, chunks: make(map[uint64]bundle.Chunk, len(d.Shards)), txs: make(map[uint64][]docTx, len(d.Shards)),
		outcomes: make(map[string]docOutcome, executed)}
	if err := fastjson.Unmarshal(d.Block, &p.block); err != nil {
		return nil, fmt.Errorf("decode block: %w", err)
	}
	p.height, p.hash = p.block.Header.Height, p.block.Header.Hash
	changes := make([]docChange, 0, total)
	for _, sh := range d.Shards {
		p.shardIDs = append(p.shardIDs, sh.ShardID)
		if len(sh.Chunk) > 0 && string(sh.Chunk) != "null" {
			chunk, txs, err := parseChunk(sh.Chunk, sh.chunk)
			if err != nil {
				return nil, fmt.Errorf("block %d shard %d: %w", p.height, sh.ShardID, err)
			}
			p.chunks[sh.ShardID] = chunk
			p.txs[sh.ShardID] = txs
		}
		for _, ro := range sh.ReceiptExecutionOutcomes {
			o, err := parseOutcome(ro.ExecutionOutcome)
			if err != nil {
				return nil, fmt.Errorf("block %d shard %d: %w", p.height, sh.ShardID, err)
			}
			if o.id == "" {
				return nil, fmt.Errorf("block %d shard %d: receipt outcome without id", p.height, sh.ShardID)
			}
			o.receipt = ro.Receipt
			p.outcomes[o.id] = o
		}
		for _, raw := range sh.StateChanges {
			// Decoded in its place in the list (a change is large):
			// dropped again when `changes` does not list its kind.
			changes = append(changes, docChange{})
			ok, err := parseChange(raw, &changes[len(changes)-1])
			if err != nil {
				return nil, fmt.Errorf("block %d shard %d: %w", p.height, sh.ShardID, err)
			}
			if !ok {
				changes = changes[:len(changes)-1]
			}
		}
	}
	p.effects, p.changes = orderChanges(changes)
	return p, nil
}

// memberValue returns the value of the member named key of the object
// raw (the last, as a decoder keeps), nil when it has none.
func memberValue(raw json.RawMessage, key string) (json.RawMessage, error) {
	ms, err := jsonobject.Members(raw)
	if err != nil {
		return nil, err
	}
	var v json.RawMessage
	for _, m := range ms {
		if m.Key == key {
			v = m.Value
		}
	}
	return v, nil
}

// The `chunk` answer is nearcore's views::ChunkView (core/primitives/src/
// views.rs, nearcore 2.13.1: author, header, transactions as
// SignedTransactionView, receipts). A document's chunk is
// near-indexer-primitives' IndexerChunkView of the same version
// (chain/indexer-primitives/src/lib.rs, read at nearcore commit
// 0d8e7e07f19f; the streamer fills instant_receipts from the receipts
// whose ProcessedReceipt source is Instant): the same members, each
// transaction beside its outcome, and two the RPC view has
// not: local_receipts (receipts of the chunk's signer == receiver
// transactions) and instant_receipts (receipts processed in the chunk that
// made them, nearcore's ReceiptSource::Instant). Those two are never
// served; ChunkView's members are served in its order; any other member
// (one nearcore adds later) passes through in place.
var (
	chunkViewMembers   = []string{"author", "header", "transactions", "receipts"}
	indexerOnlyMembers = []string{"local_receipts", "instant_receipts"}
)

// chunkViewOrder puts ChunkView's members of ms in ChunkView's order, in
// the places they hold among ms; other members keep theirs.
func chunkViewOrder(ms []jsonobject.Member) {
	var at []int
	var known []jsonobject.Member
	for i, m := range ms {
		if slices.Contains(chunkViewMembers, m.Key) {
			at = append(at, i)
			known = append(known, m)
		}
	}
	slices.SortStableFunc(known, func(a, b jsonobject.Member) int {
		return slices.Index(chunkViewMembers, a.Key) - slices.Index(chunkViewMembers, b.Key)
	})
	for j, i := range at {
		ms[i] = known[j]
	}
}

// parseChunk turns a document's chunk into the `chunk` answer by
// ChunkView's rule (above): its transactions without their outcomes, the
// indexer-only members left out, ChunkView's members in its order, every
// other member kept in place as it came. The answer is decoded once into
// its view; the transactions' hashes and signers come from it.
func parseChunk(raw json.RawMessage, scan *chunkScan) (bundle.Chunk, []docTx, error) {
	if scan == nil {
		ms, err := jsonobject.Members(raw)
		if err != nil {
			return bundle.Chunk{}, nil, fmt.Errorf("decode chunk: %w", err)
		}
		scan = &chunkScan{members: ms, txs: make([][]scannedTx, len(ms))}
	}
	var txs []docTx
	var err error
	out := make([]jsonobject.Member, 0, len(scan.members))
	for i, m := range scan.members {
		if slices.Contains(indexerOnlyMembers, m.Key) {
			continue
		}
		if m.Key == "transactions" {
			if txs, m.Value, err = chunkTransactions(m.Value, scan.txs[i]); err != nil {
				return bundle.Chunk{}, nil, err
			}
		}
		out = append(out, m)
	}
	chunkViewOrder(out)
	c := bundle.Chunk{JSON: jsonobject.Object(out)}
	if err := near.DecodeChunkView(c.JSON, &c.View); err != nil {
		return bundle.Chunk{}, nil, fmt.Errorf("decode chunk: %w", err)
	}
	if len(c.View.Transactions) != len(txs) {
		return bundle.Chunk{}, nil, fmt.Errorf("decode chunk: %d transactions for %d outcomes", len(c.View.Transactions), len(txs))
	}
	for i := range txs {
		txs[i].hash, txs[i].signerID = c.View.Transactions[i].Hash, c.View.Transactions[i].SignerID
	}
	return c, txs, nil
}

// chunkTransactions splits a chunk's [{transaction, outcome}] into the
// transactions as served (the chunk answer's member) and each one's
// outcome; scanned, when not nil, is what the document's scan found of
// them (scanChunkTransactions).
func chunkTransactions(raw json.RawMessage, scanned []scannedTx) ([]docTx, json.RawMessage, error) {
	if string(raw) == "null" {
		return nil, json.RawMessage("[]"), nil
	}
	var list []json.RawMessage
	n := len(scanned)
	if scanned == nil {
		var err error
		if list, err = jsonobject.Items(raw); err != nil {
			return nil, nil, fmt.Errorf("decode chunk transactions: %w", err)
		}
		n = len(list)
	}
	txs := make([]docTx, n)
	raws := make([]json.RawMessage, n)
	for i := range n {
		var it scannedTx
		if scanned != nil {
			it = scanned[i]
		} else {
			var err error
			if it, err = scanTransactionItem(list[i], i); err != nil {
				return nil, nil, err
			}
		}
		tx, executed := it.tx, it.executed
		if tx == nil {
			return nil, nil, fmt.Errorf("decode chunk transaction %d: no transaction", i)
		}
		if executed == nil {
			return nil, nil, fmt.Errorf("decode chunk transaction %d: no execution_outcome", i)
		}
		o, err := parseOutcome(executed)
		if err != nil {
			return nil, nil, fmt.Errorf("transaction %d: %w", i, err)
		}
		raws[i] = tx
		txs[i] = docTx{raw: tx, outcome: o}
	}
	return txs, jsonobject.Array(raws), nil
}

// scanTransactionItem takes item i of a chunk's transactions apart as
// scanChunkTransactions does, for a list of another shape, saying which
// part of it is not as a chunk's transaction is.
func scanTransactionItem(it json.RawMessage, i int) (scannedTx, error) {
	var t scannedTx
	ms, err := jsonobject.Members(it)
	if err != nil {
		return t, fmt.Errorf("decode chunk transaction %d: %w", i, err)
	}
	for _, m := range ms {
		switch m.Key {
		case "transaction":
			t.tx = m.Value
		case "outcome":
			t.outcome = m.Value
		}
	}
	if t.tx == nil {
		return t, fmt.Errorf("decode chunk transaction %d: no transaction", i)
	}
	if t.outcome != nil && string(t.outcome) != "null" {
		if t.executed, err = memberValue(t.outcome, "execution_outcome"); err != nil {
			return t, fmt.Errorf("decode chunk transaction %d outcome: %w", i, err)
		}
	}
	return t, nil
}

// docChange is a state change with the trie key nearcore stores it under,
// which orders `changes` answers.
type docChange struct {
	col byte
	key string
	sc  bundle.StateChange
}

// Trie key columns (nearcore's col::ACCOUNT, CONTRACT_CODE, ACCESS_KEY,
// CONTRACT_DATA) and the effect type of each.
var changeColumns = map[string]byte{
	near.ChangeAccountUpdate: 0, near.ChangeAccountDeletion: 0,
	near.ChangeContractCodeUpdate: 1, near.ChangeContractCodeDeletion: 1,
	near.ChangeAccessKeyUpdate: 2, near.ChangeAccessKeyDeletion: 2,
	near.ChangeDataUpdate: 9, near.ChangeDataDeletion: 9,
}

var columnEffects = map[byte]string{
	0: near.EffectAccountTouched, 1: near.EffectContractCodeTouched,
	2: near.EffectAccessKeyTouched, 9: near.EffectDataTouched,
}

// parseChange decodes a state change into ch; ok is false for a kind
// `changes` does not list.
func parseChange(raw json.RawMessage, ch *docChange) (bool, error) {
	ch.sc.JSON = raw
	if err := near.DecodeStateChange(raw, &ch.sc.View); err != nil {
		return false, fmt.Errorf("decode state change: %w", err)
	}
	col, ok := changeColumns[ch.sc.View.Type]
	if !ok {
		return false, nil
	}
	v := &ch.sc.View.Change
	// The key nearcore's trie stores the change under, which orders the
	// answers: the column, the account, then the access key's public key
	// (borsh) or the data's key.
	var sep byte
	var sub []byte
	switch col {
	case 2:
		if v.PublicKey == nil {
			return false, errors.New("access key change without public_key")
		}
		sep, sub = col, near.PublicKeyBorsh(*v.PublicKey)
	case 9:
		if v.KeyBase64 == nil {
			return false, errors.New("data change without key_base64")
		}
		sep, sub = ',', *v.KeyBase64
	}
	var key strings.Builder
	key.Grow(2 + len(v.AccountID) + len(sub))
	key.WriteByte(col)
	key.WriteString(v.AccountID)
	if sep != 0 {
		key.WriteByte(sep)
		key.Write(sub)
	}
	ch.col, ch.key = col, key.String()
	return true, nil
}

// changesOrder is the order of the kinds in Bundle.Changes (changeKinds).
var changesOrder = []byte{0, 2, 9, 1}

// orderChanges returns EXPERIMENTAL_changes_in_block (one entry per changed
// trie key, in key order) and the changes as rpcsource.Source collects them: per
// kind in changeKinds order, each account's changes in trie key order (an
// account's keys are contiguous in that order, and accounts come in the
// order the effects name them). Each key's changes keep the document's
// order, which is the order they happened.
func orderChanges(changes []docChange) ([]near.StateChangeKindView, []bundle.StateChange) {
	// Sort positions, not the changes: a docChange holds a whole decoded
	// view, and a stable sort moves each many times.
	order := make([]int32, len(changes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return strings.Compare(changes[a].key, changes[b].key) })
	effects := make([]near.StateChangeKindView, 0, len(changes))
	for i, at := range order {
		ch := &changes[at]
		if i > 0 && changes[order[i-1]].key == ch.key {
			continue
		}
		effects = append(effects, near.StateChangeKindView{Type: columnEffects[ch.col], AccountID: ch.sc.View.Change.AccountID})
	}
	var out []bundle.StateChange
	if len(changes) > 0 {
		out = make([]bundle.StateChange, 0, len(changes))
	}
	for _, col := range changesOrder {
		for _, at := range order {
			if changes[at].col == col {
				out = append(out, changes[at].sc)
			}
		}
	}
	return effects, out
}
