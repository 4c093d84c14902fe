// Package bundle is what flows from a source to the store: everything
// indexed for one block (Bundle), and the transaction status a source fetches
// again (TxRef, TxStatus). Neither the sources nor the store own it, so a
// source depends on this package and near, never on the store.
package bundle

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/nearline/nearline/near"
)

// ErrNoBlock is returned (wrapped) by a source asked for a height at which
// the upstream has no block (the chain skipped it, or it is not produced yet).
var ErrNoBlock = errors.New("no block at height")

// Bundle is everything indexed for one block: the unit a source produces and
// the store writes.
type Bundle struct {
	// Block is the decoded `block` result and BlockJSON the result exactly as
	// the upstream served it.
	Block     near.BlockView
	BlockJSON json.RawMessage
	// Chunks are the chunks new in this block (height_included equal to the
	// block height). Missing chunks (an older chunk repeated) are only
	// recorded in block_chunks, from Block.
	Chunks []Chunk
	// OlderChunks are chunks this block repeats for a shard (missing chunk)
	// that were included before the first indexed block, so no earlier
	// bundle carried them. Only their `chunk` view is stored (at their
	// height_included); their transactions belong to a block before the
	// archive.
	OlderChunks []Chunk
	// ShardIDs, when set, are the shard ids of the block's layout (the
	// layout of its epoch), one per entry of Block.Chunks: block_chunks is
	// keyed by them. Nil when each equals its chunk header's shard_id,
	// which is so except right after a resharding, where a child shard
	// whose chunk is missing repeats its parent's last chunk header (see
	// LayoutShardIDs).
	ShardIDs []uint64
	// Effects is the EXPERIMENTAL_changes_in_block result, in upstream order.
	Effects []near.StateChangeKindView
	// Changes are the EXPERIMENTAL_changes results, in the order fetched:
	// account, access key, data, then contract code changes; within a kind,
	// accounts in the order the source asked for them, each account's
	// changes in upstream order.
	Changes []StateChange
	// TxStatuses are the EXPERIMENTAL_tx_status results of the transactions
	// of Chunks.
	TxStatuses []TxStatus
	// ProtocolConfig is set when the source fetched the epoch's
	// EXPERIMENTAL_protocol_config with this block.
	ProtocolConfig *ProtocolConfig
	// Skipped are heights below this block, after the previous committed
	// block, where the chain produced no block. Set by the indexer.
	Skipped []uint64
	// Release, when set, is called once the block is written (its batch
	// committed), after which nothing may read the bundle: its source
	// then reuses the memory its parts are in. A bundle dropped unwritten
	// is left to the garbage collector.
	Release func()
}

// Height returns the block's height.
func (b *Bundle) Height() uint64 { return b.Block.Header.Height }

// Chunk is a `chunk` result, decoded and as served.
type Chunk struct {
	View near.ChunkView
	JSON json.RawMessage
}

// StateChange is one entry of an EXPERIMENTAL_changes result, decoded and as
// served (JSON may be nil; then View is encoded).
type StateChange struct {
	View near.StateChangeWithCauseView
	JSON json.RawMessage
}

// TxStatus is an EXPERIMENTAL_tx_status result, as served. BlockHeights maps
// the block hashes of its execution outcomes to their heights (outcomes whose
// block is not in the map are stored with the transaction's height).
type TxStatus struct {
	TxHash       string
	SignerID     string
	JSON         json.RawMessage
	BlockHeights map[string]uint64
	// Body, when set, is JSON decoded (the store decodes JSON itself
	// otherwise).
	Body *TxStatusBody
}

// ProtocolConfig is an EXPERIMENTAL_protocol_config result for an epoch.
type ProtocolConfig struct {
	EpochID         string
	ProtocolVersion uint32
	JSON            json.RawMessage
}

// LayoutShardIDs returns Bundle.ShardIDs for a block's chunk headers under
// a layout's shard ids (by index): nil when they agree with the headers'
// shard_id or when ids does not fit the block (unknown layout, or one with
// another shard count).
func LayoutShardIDs(chunks []near.ChunkHeaderView, ids []uint64) []uint64 {
	if len(ids) != len(chunks) {
		return nil
	}
	for i, c := range chunks {
		if c.ShardID != ids[i] {
			return slices.Clone(ids)
		}
	}
	return nil
}

// TxRef names a stored transaction status.
type TxRef struct {
	TxHash   string
	SignerID string
	Height   uint64 // height of the block including the transaction
}

// TxStatusBody is the part of an EXPERIMENTAL_tx_status result the store
// types: its final status and its outcomes' typed columns (the status as
// served is kept in the block's document). A Source that decodes it anyway
// hands it over in TxStatus.Body, so the status is not decoded twice.
type TxStatusBody struct {
	FinalExecutionStatus string           `json:"final_execution_status"`
	TransactionOutcome   *OutcomeFields   `json:"transaction_outcome"`
	ReceiptsOutcome      []*OutcomeFields `json:"receipts_outcome"`
}

// OutcomeFields are the members of an ExecutionOutcomeWithIdView that
// execution_outcomes types.
type OutcomeFields struct {
	BlockHash string `json:"block_hash"`
	ID        string `json:"id"`
	Outcome   struct {
		// ReceiptIDs are the receipts the outcome created (the document
		// source follows them to assemble a status).
		ReceiptIDs  []string        `json:"receipt_ids"`
		GasBurnt    uint64          `json:"gas_burnt"`
		TokensBurnt near.U128       `json:"tokens_burnt"`
		ExecutorID  string          `json:"executor_id"`
		Status      json.RawMessage `json:"status"`
		// Logs is decoded only when it holds an event log.
		Logs json.RawMessage `json:"logs"`
	} `json:"outcome"`
}
