package docsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nearline/nearline/bundle"
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
	// EXPERIMENTAL_changes answers, as NodeSource collects them.
	effects []near.StateChangeKindView
	changes []bundle.StateChange
}

// docTx is a transaction of a chunk and its outcome.
type docTx struct {
	hash, signerID string
	raw            json.RawMessage // SignedTransactionView
	outcome        docOutcome
}

// docOutcome is an execution outcome (ExecutionOutcomeWithIdView) and, for
// a receipt, the receipt.
type docOutcome struct {
	raw        json.RawMessage
	receipt    json.RawMessage
	blockHash  string
	receiptIDs []string
	status     json.RawMessage
}

func parseOutcome(raw json.RawMessage) (docOutcome, error) {
	var o struct {
		BlockHash string `json:"block_hash"`
		Outcome   struct {
			ReceiptIDs []string        `json:"receipt_ids"`
			Status     json.RawMessage `json:"status"`
		} `json:"outcome"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return docOutcome{}, fmt.Errorf("decode execution outcome: %w", err)
	}
	return docOutcome{raw: raw, blockHash: o.BlockHash, receiptIDs: o.Outcome.ReceiptIDs, status: o.Outcome.Status}, nil
}

// parseDocument takes a document apart. Unknown members are kept where the
// RPC answers carry them (block view, chunk header, transactions,
// outcomes, receipts and state changes stay as served).
func parseDocument(d *BlockDocument) (*parsedDoc, error) {
	p := &parsedDoc{raw: d.Block, chunks: map[uint64]bundle.Chunk{}, txs: map[uint64][]docTx{}, outcomes: map[string]docOutcome{}}
	if err := json.Unmarshal(d.Block, &p.block); err != nil {
		return nil, fmt.Errorf("decode block: %w", err)
	}
	p.height, p.hash = p.block.Header.Height, p.block.Header.Hash
	var changes []docChange
	for _, sh := range d.Shards {
		p.shardIDs = append(p.shardIDs, sh.ShardID)
		if len(sh.Chunk) > 0 && string(sh.Chunk) != "null" {
			chunk, txs, err := parseChunk(sh.Chunk)
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
			o.receipt = ro.Receipt
			var id struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(ro.ExecutionOutcome, &id); err != nil || id.ID == "" {
				return nil, fmt.Errorf("block %d shard %d: receipt outcome without id", p.height, sh.ShardID)
			}
			p.outcomes[id.ID] = o
		}
		for _, raw := range sh.StateChanges {
			ch, ok, err := parseChange(raw)
			if err != nil {
				return nil, fmt.Errorf("block %d shard %d: %w", p.height, sh.ShardID, err)
			}
			if ok {
				changes = append(changes, ch)
			}
		}
	}
	p.effects, p.changes = orderChanges(changes)
	return p, nil
}

// member is one member of a JSON object, in document order.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers lists an object's members in order.
func objectMembers(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	return out, nil
}

func writeObject(members []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// parseChunk turns a document's chunk into the `chunk` answer: its
// transactions without their outcomes, local_receipts (a document's own)
// left out, every other member kept in place.
func parseChunk(raw json.RawMessage) (bundle.Chunk, []docTx, error) {
	members, err := objectMembers(raw)
	if err != nil {
		return bundle.Chunk{}, nil, fmt.Errorf("decode chunk: %w", err)
	}
	var txs []docTx
	out := members[:0:0]
	for _, m := range members {
		switch m.key {
		case "local_receipts":
			continue
		case "transactions":
			var items []struct {
				Transaction json.RawMessage `json:"transaction"`
				Outcome     struct {
					ExecutionOutcome json.RawMessage `json:"execution_outcome"`
				} `json:"outcome"`
			}
			if err := json.Unmarshal(m.value, &items); err != nil {
				return bundle.Chunk{}, nil, fmt.Errorf("decode chunk transactions: %w", err)
			}
			raws := make([]json.RawMessage, len(items))
			for i, it := range items {
				var id struct {
					Hash     string `json:"hash"`
					SignerID string `json:"signer_id"`
				}
				if err := json.Unmarshal(it.Transaction, &id); err != nil {
					return bundle.Chunk{}, nil, fmt.Errorf("decode transaction: %w", err)
				}
				o, err := parseOutcome(it.Outcome.ExecutionOutcome)
				if err != nil {
					return bundle.Chunk{}, nil, fmt.Errorf("transaction %s: %w", id.Hash, err)
				}
				raws[i] = it.Transaction
				txs = append(txs, docTx{hash: id.Hash, signerID: id.SignerID, raw: it.Transaction, outcome: o})
			}
			m.value = writeArray(raws)
		}
		out = append(out, m)
	}
	c := bundle.Chunk{JSON: writeObject(out)}
	if err := json.Unmarshal(c.JSON, &c.View); err != nil {
		return bundle.Chunk{}, nil, fmt.Errorf("decode chunk: %w", err)
	}
	return c, txs, nil
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

// parseChange decodes a state change; ok is false for a kind `changes`
// does not list.
func parseChange(raw json.RawMessage) (docChange, bool, error) {
	sc := bundle.StateChange{JSON: raw}
	if err := json.Unmarshal(raw, &sc.View); err != nil {
		return docChange{}, false, fmt.Errorf("decode state change: %w", err)
	}
	col, ok := changeColumns[sc.View.Type]
	if !ok {
		return docChange{}, false, nil
	}
	v := sc.View.Change
	var key strings.Builder
	key.WriteByte(col)
	key.WriteString(v.AccountID)
	switch col {
	case 2:
		if v.PublicKey == nil {
			return docChange{}, false, errors.New("access key change without public_key")
		}
		key.WriteByte(col)
		key.Write(near.PublicKeyBorsh(*v.PublicKey))
	case 9:
		if v.KeyBase64 == nil {
			return docChange{}, false, errors.New("data change without key_base64")
		}
		key.WriteByte(',')
		key.Write(*v.KeyBase64)
	}
	return docChange{col: col, key: key.String(), sc: sc}, true, nil
}

// changesOrder is the order of the kinds in Bundle.Changes (changeKinds).
var changesOrder = []byte{0, 2, 9, 1}

// orderChanges returns EXPERIMENTAL_changes_in_block (one entry per changed
// trie key, in key order) and the changes as NodeSource collects them: per
// kind in changeKinds order, each account's changes in trie key order (an
// account's keys are contiguous in that order, and accounts come in the
// order the effects name them). Each key's changes keep the document's
// order, which is the order they happened.
func orderChanges(changes []docChange) ([]near.StateChangeKindView, []bundle.StateChange) {
	slices.SortStableFunc(changes, func(a, b docChange) int { return strings.Compare(a.key, b.key) })
	effects := []near.StateChangeKindView{}
	for i, ch := range changes {
		if i > 0 && changes[i-1].key == ch.key {
			continue
		}
		effects = append(effects, near.StateChangeKindView{Type: columnEffects[ch.col], AccountID: ch.sc.View.Change.AccountID})
	}
	var out []bundle.StateChange
	for _, col := range changesOrder {
		for _, ch := range changes {
			if ch.col == col {
				out = append(out, ch.sc)
			}
		}
	}
	return effects, out
}
