package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nearline/nearline/near"
)

// Block documents: the node serves its chain as FastNEAR's neardata does
// (`GET /v0/block/{height}`, `GET /v0/last_block/final`) and in NEAR Lake's
// layout (`GET /lake/{height:012}/block.json`, `.../shard_{id}.json`),
// built from the same values its JSON-RPC serves.
//
// A document is nearcore's StreamerMessage: the block view and, for every
// shard of the layout, an IndexerShard: the chunk included in this block
// (null for a missing chunk) with its transactions, each beside its
// outcome, the receipts executed in the shard at this block with their
// outcomes and the transaction they descend from, and the shard's state
// changes with their causes, in trie key order.

// neardataMaxWait is how far past the final head a neardata request waits
// for its block; further is BLOCK_DOES_NOT_EXIST, as neardata answers.
const neardataMaxWait = 10

// neardataPoll is how often a waiting request looks at the head again.
const neardataPoll = 100 * time.Millisecond

type docMessage struct {
	Block  json.RawMessage `json:"block"`
	Shards []docShard      `json:"shards"`
}

type docShard struct {
	ShardID                  uint64                          `json:"shard_id"`
	Chunk                    *docChunk                       `json:"chunk"`
	ReceiptExecutionOutcomes []docReceiptOutcome             `json:"receipt_execution_outcomes"`
	StateChanges             []near.StateChangeWithCauseView `json:"state_changes"`
}

type docChunk struct {
	Author        string               `json:"author"`
	Header        near.ChunkHeaderView `json:"header"`
	Transactions  []docTransaction     `json:"transactions"`
	Receipts      []near.ReceiptView   `json:"receipts"`
	LocalReceipts []near.ReceiptView   `json:"local_receipts"`
	// InstantReceipts is nil before protocol 86 (protocol86.go).
	InstantReceipts *[]near.ReceiptView `json:"instant_receipts,omitempty"`
}

type docTransaction struct {
	Transaction near.SignedTransactionView `json:"transaction"`
	Outcome     docTxOutcome               `json:"outcome"`
}

// docTxOutcome is a transaction's outcome; its receipt is always null.
type docTxOutcome struct {
	ExecutionOutcome near.ExecutionOutcomeWithIDView `json:"execution_outcome"`
	Receipt          *near.ReceiptView               `json:"receipt"`
}

type docReceiptOutcome struct {
	ExecutionOutcome near.ExecutionOutcomeWithIDView `json:"execution_outcome"`
	Receipt          near.ReceiptView                `json:"receipt"`
	TxHash           *string                         `json:"tx_hash"`
}

// shardDoc builds block b's document of the shard at index s of its
// layout. The caller holds the read lock.
func (c *chain) shardDoc(b *block, s int) docShard {
	layout := c.layoutAt(b.height)
	out := docShard{ShardID: layout.ids[s], ReceiptExecutionOutcomes: []docReceiptOutcome{}, StateChanges: []near.StateChangeWithCauseView{}}
	if s < len(b.view.Header.ChunkMask) && b.view.Header.ChunkMask[s] {
		if ch := c.chunks[b.view.Chunks[s].ChunkHash]; ch != nil {
			dc := &docChunk{Author: ch.view.Author, Header: ch.view.Header, Transactions: []docTransaction{},
				Receipts: ch.view.Receipts, LocalReceipts: []near.ReceiptView{}}
			for _, tx := range ch.view.Transactions {
				t := c.txs[tx.Hash]
				if t == nil {
					continue
				}
				dc.Transactions = append(dc.Transactions, docTransaction{Transaction: tx, Outcome: docTxOutcome{ExecutionOutcome: t.outcome}})
				if tx.SignerID == tx.ReceiverID { // converted into a local receipt
					if r := c.receipts[t.receiptID]; r != nil {
						dc.LocalReceipts = append(dc.LocalReceipts, r.view)
					}
				}
			}
			if layout.protocol >= protocolInstantReceipts {
				instant := []near.ReceiptView{}
				if s < len(b.instant) {
					for _, r := range b.instant[s] {
						instant = append(instant, r.view)
					}
				}
				dc.InstantReceipts = &instant
			}
			out.Chunk = dc
		}
	}
	if s < len(b.executed) {
		for _, r := range b.executed[s] {
			ro := docReceiptOutcome{ExecutionOutcome: r.outcome, Receipt: r.view}
			if r.txHash != "" {
				h := r.txHash
				ro.TxHash = &h
			}
			out.ReceiptExecutionOutcomes = append(out.ReceiptExecutionOutcomes, ro)
		}
	}
	for _, ch := range b.changes {
		if layout.index(ch.view.Change.AccountID) == s {
			out.StateChanges = append(out.StateChanges, ch.view)
		}
	}
	return out
}

// documentAt returns the block document at height, or "null" for a skipped
// height. The caller holds the read lock and has checked height is final.
func (c *chain) documentAt(height uint64) (json.RawMessage, error) {
	b := c.byHeight[height]
	if b == nil {
		return json.RawMessage("null"), nil
	}
	msg := docMessage{Block: b.json, Shards: make([]docShard, len(b.view.Chunks))}
	for s := range msg.Shards {
		msg.Shards[s] = c.shardDoc(b, s)
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("encode block document %d: %w", height, err)
	}
	return out, nil
}

// documentRoutes adds the neardata and NEAR Lake routes to mux.
func (n *Node) documentRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v0/block/{height}", n.serveNeardataBlock)
	mux.HandleFunc("GET /v0/last_block/final", n.serveNeardataFinal)
	mux.HandleFunc("GET /lake/{folder}/{file}", n.serveLake)
}

func writeDocJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// docError answers neardata's error body.
func docError(w http.ResponseWriter, status int, msg, kind string) {
	body, _ := json.Marshal(map[string]string{"error": msg, "type": kind})
	writeDocJSON(w, status, body)
}

// finalHeight returns the final head's height; ok is false before the
// first block. The caller holds the read lock.
func (c *chain) finalHeight() (uint64, bool) {
	b := c.byFinality(near.FinalityFinal)
	if b == nil {
		return 0, false
	}
	return b.height, true
}

func (n *Node) serveNeardataFinal(w http.ResponseWriter, _ *http.Request) {
	n.mu.RLock()
	h, ok := n.chain.finalHeight()
	n.mu.RUnlock()
	if !ok {
		docError(w, http.StatusInternalServerError, "Cache error: The last block height is missing from the cache", "CACHE_ERROR")
		return
	}
	w.Header().Set("Location", "/v0/block/"+strconv.FormatUint(h, 10))
	w.WriteHeader(http.StatusFound)
}

// serveNeardataBlock answers a height at or below the final head at once
// (null for a skipped one); a height up to neardataMaxWait past it waits
// for the block, as neardata does; one further is BLOCK_DOES_NOT_EXIST.
func (n *Node) serveNeardataBlock(w http.ResponseWriter, r *http.Request) {
	height, err := strconv.ParseUint(r.PathValue("height"), 10, 64)
	if err != nil {
		writeDocJSON(w, http.StatusBadRequest, []byte(`"Invalid argument"`))
		return
	}
	if height < n.cfg.GenesisHeight {
		docError(w, http.StatusNotFound, "Block height is before the genesis", "BLOCK_HEIGHT_TOO_LOW")
		return
	}
	for {
		n.mu.RLock()
		final, ok := n.chain.finalHeight()
		if ok && height <= final {
			body, err := n.documentOrGone(height)
			n.mu.RUnlock()
			if err != nil {
				n.log.Error("serve block document", "height", height, "err", err)
				docError(w, http.StatusInternalServerError, "Cache error: internal", "CACHE_ERROR")
				return
			}
			if body == nil {
				docError(w, http.StatusNotFound, "The block is garbage-collected", "BLOCK_DOES_NOT_EXIST")
				return
			}
			writeDocJSON(w, http.StatusOK, body)
			return
		}
		n.mu.RUnlock()
		if ok && height > final+neardataMaxWait {
			docError(w, http.StatusNotFound, "The block is too far in the future", "BLOCK_DOES_NOT_EXIST")
			return
		}
		if !waitCtx(r.Context(), neardataPoll) {
			return
		}
	}
}

// documentOrGone is documentAt, or nil for a garbage-collected height.
func (n *Node) documentOrGone(height uint64) (json.RawMessage, error) {
	if n.chain.gcd(height) {
		return nil, nil
	}
	return n.chain.documentAt(height)
}

// serveLake answers NEAR Lake's objects: {height:012}/block.json (the
// block view) and {height:012}/shard_{id}.json (that shard's part of the
// document). A height that is skipped, not final yet or garbage-collected
// has no objects: 404, as a bucket answers a missing key.
func (n *Node) serveLake(w http.ResponseWriter, r *http.Request) {
	folder, file := r.PathValue("folder"), r.PathValue("file")
	height, err := strconv.ParseUint(folder, 10, 64)
	if err != nil || len(folder) != 12 {
		http.Error(w, "NoSuchKey", http.StatusNotFound)
		return
	}
	var shardID uint64
	if file != "block.json" {
		id, ok := strings.CutPrefix(file, "shard_")
		id, ok2 := strings.CutSuffix(id, ".json")
		if shardID, err = strconv.ParseUint(id, 10, 64); !ok || !ok2 || err != nil {
			http.Error(w, "NoSuchKey", http.StatusNotFound)
			return
		}
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	c := n.chain
	final, ok := c.finalHeight()
	b := c.byHeight[height]
	if !ok || height > final || b == nil || c.gcd(height) {
		http.Error(w, "NoSuchKey", http.StatusNotFound)
		return
	}
	if file == "block.json" {
		writeDocJSON(w, http.StatusOK, b.json)
		return
	}
	// Shard files are named by the shard ids of the block's layout.
	shard, ok := c.layoutAt(height).indexOf(shardID)
	if !ok {
		http.Error(w, "NoSuchKey", http.StatusNotFound)
		return
	}
	body, err := json.Marshal(c.shardDoc(b, shard))
	if err != nil {
		n.log.Error("serve lake shard", "height", height, "shard_id", shardID, "err", err)
		http.Error(w, "InternalError", http.StatusInternalServerError)
		return
	}
	writeDocJSON(w, http.StatusOK, body)
}

// waitCtx pauses for d or until ctx ends; it reports whether ctx is live.
func waitCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
