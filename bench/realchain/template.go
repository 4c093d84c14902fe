// Package realchain makes a chain of linked blocks out of one real block
// document (neardata's /v0/block/:height shape): copy k is the document at
// height H+k, linked to copy k-1, every id remapped per copy so that no key
// collides, and the receipts a copy creates executed in the next copy, so
// that transaction statuses complete as they do on the real chain. It is
// the benchmark's real-mainnet workload (go run ./bench --only real).
package realchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

// DefaultBlockTime is the time between two copies' timestamps.
const DefaultBlockTime = 1_000_000_000 // ns

// Template is a block document ready to be copied.
type Template struct {
	doc       []byte
	height    uint64
	blockTime uint64
	blockHash string
	prevHash  string
	lastFinal string
	ids       map[string]bool   // every string at an id position
	pairs     map[string]string // executed (or incoming) receipt id -> the created id of the previous copy it becomes
	executed  []executedTx      // per executed receipt, in document order: the transaction it belongs to
	txs       []string          // the document's transaction hashes
	signers   []string          // and their signers
	shards    []uint64
	accounts  []string // accounts whose account changes in the block
	stats     Stats
}

// executedTx is the transaction an executed receipt belongs to in the
// chain: root indexes Template.txs (-1: none in the chain), and the receipt
// executes depth copies after it.
type executedTx struct {
	root, depth int
}

// Stats describes a template's receipts and how they pair across copies.
type Stats struct {
	Transactions int
	// Executed receipts (with an outcome) and incoming receipts of the
	// chunks that do not execute in the block.
	Executed, IncomingOnly int
	// Created is the receipts the block's outcomes create that do not
	// execute in the block itself (SameBlock do).
	Created, SameBlock int
	// Paired is the created receipts that are executed receipts of the
	// next copy; PairedIncoming those that are only incoming receipts of
	// its chunks. ByAccount of Paired match the account that created them
	// (the predecessor, or the receiver of a refund).
	Paired, PairedIncoming, ByAccount int
	// Complete is the transactions whose every receipt executes in the
	// chain (their status becomes FINAL); MaxDepth the most copies a
	// transaction's receipts run after it.
	Complete, MaxDepth int
	// InTransactions is the executed receipts a transaction of the chain
	// made (their outcomes are in its status); Orphans those none did.
	InTransactions, Orphans int
}

// Option tunes a Template.
type Option func(*Template)

// WithBlockTime sets the time between copies (default DefaultBlockTime).
func WithBlockTime(ns uint64) Option { return func(t *Template) { t.blockTime = ns } }

// New reads a block document and pairs the receipts its copies create with
// those the next copies execute.
func New(doc []byte, opts ...Option) (*Template, error) {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("block document: %w", err)
	}
	h := d.Block.Header
	if h.Hash == "" || h.Height == 0 {
		return nil, errors.New("block document: no header hash or height")
	}
	if _, err := strconv.ParseUint(h.TimestampNanosec, 10, 64); err != nil {
		return nil, fmt.Errorf("block document: timestamp_nanosec %q: %w", h.TimestampNanosec, err)
	}
	t := &Template{doc: doc, height: h.Height, blockTime: DefaultBlockTime,
		blockHash: h.Hash, prevHash: h.PrevHash, lastFinal: h.LastFinalBlock,
		ids: map[string]bool{}, pairs: map[string]string{}}
	for _, o := range opts {
		o(t)
	}
	if _, err := rewrite(doc, func(path []string, tok []byte) []byte {
		if idPosition(path) != idNone && len(tok) > 1 && tok[0] == '"' {
			t.ids[string(tok[1:len(tok)-1])] = true
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("block document: %w", err)
	}
	t.pair(&d)
	seen := map[string]bool{}
	for _, sh := range d.Shards {
		t.shards = append(t.shards, sh.ShardID)
		for _, c := range sh.StateChanges {
			if c.Type == "account_update" && !seen[c.Change.AccountID] {
				seen[c.Change.AccountID] = true
				t.accounts = append(t.accounts, c.Change.AccountID)
			}
		}
	}
	return t, nil
}

// Tx is a transaction of a copy.
type Tx struct{ Hash, SignerID string }

// Transactions returns copy k's transactions.
func (t *Template) Transactions(k int) []Tx {
	out := make([]Tx, len(t.txs))
	for i, h := range t.txs {
		out[i] = Tx{Hash: newID(h, k), SignerID: t.signers[i]}
	}
	return out
}

// ShardIDs returns the document's shard ids, in its order.
func (t *Template) ShardIDs() []uint64 { return t.shards }

// Accounts returns the accounts whose account the block changes (every copy
// changes them again).
func (t *Template) Accounts() []string { return t.accounts }

// Height is the template's height: copy k is at Height()+k.
func (t *Template) Height() uint64 { return t.height }

// Stats returns how the template's receipts pair.
func (t *Template) Stats() Stats { return t.stats }

// Copies returns copies 0 to n-1, a chain of n linked blocks.
func (t *Template) Copies(n int) ([][]byte, error) {
	docs := make([][]byte, n)
	for k := range docs {
		var err error
		if docs[k], err = t.Copy(k); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// Copy returns copy k of the document: at height Height()+k, linked to
// copy k-1 (copy 0 is the document itself, byte for byte).
func (t *Template) Copy(k int) ([]byte, error) {
	if k < 0 {
		return nil, fmt.Errorf("copy %d: want k >= 0", k)
	}
	if k == 0 {
		return bytes.Clone(t.doc), nil
	}
	m := make(map[string]string, len(t.ids))
	for id := range t.ids {
		m[id] = newID(id, k)
	}
	for e, c := range t.pairs {
		m[e] = newID(c, k-1)
	}
	m[t.blockHash] = t.blockID(k)
	if t.prevHash != "" {
		m[t.prevHash] = t.blockID(k - 1)
	}
	if t.lastFinal != "" && t.lastFinal != t.prevHash && t.lastFinal != t.blockHash {
		m[t.lastFinal] = t.blockID(k - 2)
	}
	executed := 0
	dk := uint64(k)
	return rewrite(t.doc, func(path []string, tok []byte) []byte {
		switch idPosition(path) {
		case idNone:
		case idExecutedTx:
			i := executed
			executed++
			if tok[0] != '"' || i >= len(t.executed) {
				return nil
			}
			if x := t.executed[i]; x.root >= 0 && k-x.depth >= 0 {
				return quote(newID(t.txs[x.root], k-x.depth))
			}
			return quote(m[string(tok[1:len(tok)-1])])
		default:
			if tok[0] == '"' {
				if r, ok := m[string(tok[1:len(tok)-1])]; ok {
					return quote(r)
				}
			}
			return nil
		}
		switch heightPosition(path) {
		case shiftHeight:
			return addUint(tok, dk, false)
		case shiftTime:
			return addUint(tok, dk*t.blockTime, false)
		case shiftTimeString:
			return addUint(tok, dk*t.blockTime, true)
		case shiftPrevHeight:
			return []byte(strconv.FormatUint(t.height+dk-1, 10))
		}
		return nil
	})
}

// blockID is the hash of copy j's block; below 0, the template's
// ancestors (its prev_hash, then its last_final_block).
func (t *Template) blockID(j int) string {
	switch {
	case j == -1:
		return t.prevHash
	case j < -1:
		return t.lastFinal
	}
	return newID(t.blockHash, j)
}

// newID is id's counterpart in copy k: id itself in copy 0, else a hash of
// both, base58 as NEAR writes hashes.
func newID(id string, k int) string {
	if k == 0 {
		return id
	}
	h := sha256.New()
	h.Write([]byte("nearline realchain\x00"))
	h.Write([]byte(id))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(k))
	h.Write(n[:])
	return near.Base58Encode(h.Sum(nil))
}

func quote(s string) []byte { return []byte(`"` + s + `"`) }

// addUint adds d to an unsigned integer token (quoted when inQuotes).
func addUint(tok []byte, d uint64, inQuotes bool) []byte {
	s := string(tok)
	if inQuotes {
		if len(s) < 2 || s[0] != '"' {
			return nil
		}
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil
	}
	r := strconv.FormatUint(v+d, 10)
	if inQuotes {
		return quote(r)
	}
	return []byte(r)
}

// rewrite is jsonobject.Rewrite: doc copied byte for byte, each scalar
// replaced by what visit returns for it (nil keeps it), visit given the
// path of member names leading to the scalar ("#" for an array element).
// Names in the path are decoded; the names idPosition and heightPosition
// look for are plain ASCII, the same decoded or not.
func rewrite(doc []byte, visit func(path []string, tok []byte) []byte) ([]byte, error) {
	return jsonobject.Rewrite(doc, visit)
}

// hasSuffix reports whether path ends with suffix.
func hasSuffix(path []string, suffix ...string) bool {
	if len(path) < len(suffix) {
		return false
	}
	tail := path[len(path)-len(suffix):]
	for i, s := range suffix {
		if tail[i] != s {
			return false
		}
	}
	return true
}

// Kinds of id positions.
const (
	idNone       = iota
	idValue      // remapped by value, consistently within a copy
	idExecutedTx // an executed receipt's tx_hash: its transaction's in the chain
)

// idPosition tells whether path holds an id: a block, chunk, transaction,
// receipt, outcome or data id, or a state change's cause. Hashes that are
// not keys (roots, proofs, code hashes, a transaction's reference block,
// epochs) are not ids.
func idPosition(path []string) int {
	n := len(path)
	if n == 0 {
		return idNone
	}
	switch path[n-1] {
	case "receipt_id", "SuccessReceiptId":
		return idValue
	case "hash":
		if n == 3 && path[0] == "block" && path[1] == "header" || hasSuffix(path, "transactions", "#", "transaction", "hash") {
			return idValue
		}
	case "prev_hash", "last_ds_final_block", "last_final_block":
		if n == 3 && path[0] == "block" && path[1] == "header" {
			return idValue
		}
	case "chunk_hash", "prev_block_hash":
		if hasSuffix(path, "chunks", "#", path[n-1]) || hasSuffix(path, "chunk", "header", path[n-1]) {
			return idValue
		}
	case "id", "block_hash":
		if hasSuffix(path, "execution_outcome", path[n-1]) {
			return idValue
		}
	case "data_id":
		if hasSuffix(path, "output_data_receivers", "#", "data_id") || hasSuffix(path, "Data", "data_id") {
			return idValue
		}
	case "tx_hash":
		if hasSuffix(path, "receipt_execution_outcomes", "#", "tx_hash") {
			return idExecutedTx
		}
		if hasSuffix(path, "cause", "tx_hash") {
			return idValue
		}
	case "receipt_hash":
		if hasSuffix(path, "cause", "receipt_hash") {
			return idValue
		}
	case "#":
		if hasSuffix(path, "outcome", "receipt_ids", "#") || hasSuffix(path, "input_data_ids", "#") {
			return idValue
		}
	}
	return idNone
}

// Kinds of height and time positions.
const (
	shiftNone       = iota
	shiftHeight     // + k
	shiftTime       // + k block times
	shiftTimeString // the same, in a string
	shiftPrevHeight // the height of copy k-1
)

func heightPosition(path []string) int {
	n := len(path)
	if n == 3 && path[0] == "block" && path[1] == "header" {
		switch path[2] {
		case "height", "block_ordinal":
			return shiftHeight
		case "prev_height":
			return shiftPrevHeight
		case "timestamp":
			return shiftTime
		case "timestamp_nanosec":
			return shiftTimeString
		}
		return shiftNone
	}
	switch path[n-1] {
	case "height_created", "height_included":
		if hasSuffix(path, "chunks", "#", path[n-1]) || hasSuffix(path, "chunk", "header", path[n-1]) {
			return shiftHeight
		}
	}
	return shiftNone
}
