package store

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/packed"
)

// rowSet holds the rows of a batch, per table, in COPY column order.
type rowSet struct {
	blocks, skipped, blockChunks, chunks, transactions, receipts      [][]any
	outcomes, txStatuses                                              [][]any
	accounts, accessKeys, data, codeHistory, codes, protocols, epochs [][]any
	olderChunks, globalDistributions, changeDocs, statusDocs          [][]any
	codec                                                             *packed.Codec
	seenCodes, seenProtocols, seenOlder                               map[string]bool
	// epochFirst is the lowest height of each epoch in the batch: the
	// height a protocol config is recorded at, whichever of the epoch's
	// blocks (fetched concurrently) happened to carry it.
	epochFirst map[string]int64
	// unknown counts variants stored verbatim but not modelled, by kind.
	unknown map[string]int
	// labels are the enum labels the rows use, by type.
	labels labelSet
	// events says whether the explorer tables' rows (ex) are built.
	events bool
	ex     explorerRows
	// receiptFacts (by receipt id) and baseCandidates are what the batch
	// says of account bases; bases and remoteCandidates are what findBases
	// makes of them (account_base.go).
	receiptFacts     map[string][]receiptFacts
	baseCandidates   []baseCandidate
	bases            []accountBase
	remoteCandidates []baseCandidate
	// statusBlocks are the blocks' statuses, packed by packStatuses once
	// parts holds every chunk of the batch (status_doc.go).
	statusBlocks []statusBlock
	parts        statusParts
}

func newRowSet(codec *packed.Codec) *rowSet {
	return &rowSet{codec: codec, seenCodes: map[string]bool{}, seenProtocols: map[string]bool{}, seenOlder: map[string]bool{},
		epochFirst: map[string]int64{}, unknown: map[string]int{}, labels: labelSet{},
		receiptFacts: map[string][]receiptFacts{}, parts: newStatusParts()}
}

// jsonText returns raw when set, else v encoded.
func jsonText(raw json.RawMessage, v any) (string, error) {
	b, err := rawJSON(raw, v)
	return string(b), err
}

// rawJSON returns raw when set, else v encoded.
func rawJSON(raw json.RawMessage, v any) (json.RawMessage, error) {
	if len(raw) > 0 {
		return raw, nil
	}
	return json.Marshal(v)
}

func (r *rowSet) addBundle(b *bundle.Bundle) error {
	h := b.Block.Header
	height := int64(h.Height)
	blockJSON, err := jsonText(b.BlockJSON, &b.Block)
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
	// The chunks' rows in the order of their tables' keys (height, shard,
	// index), not the document's (mainnet's shard ids are not in order):
	// appended at the right of the keys' indexes, their leaves fill up
	// rather than split in two halves.
	for _, i := range byShard(b.Chunks) {
		if err := r.addChunk(height, &b.Chunks[i]); err != nil {
			return err
		}
	}
	for i := range b.OlderChunks {
		if err := r.addOlderChunk(&b.OlderChunks[i]); err != nil {
			return err
		}
	}
	if err := r.addChanges(height, b.Changes, b.Effects); err != nil {
		return err
	}
	if len(b.TxStatuses) > 0 {
		sb := statusBlock{height: height, statuses: make([]json.RawMessage, len(b.TxStatuses)), hashes: make([]string, len(b.TxStatuses))}
		for i := range b.TxStatuses {
			if err := r.addTxStatus(height, i, &b.TxStatuses[i]); err != nil {
				return err
			}
			sb.statuses[i], sb.hashes[i] = b.TxStatuses[i].JSON, b.TxStatuses[i].TxHash
		}
		r.statusBlocks = append(r.statusBlocks, sb)
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

// blockTables are the block-level tables: the block, the heights skipped
// before it, its chunk per shard, and the protocol config of its epoch.
var blockTables = []table{
	{name: "blocks", heightColumn: "height", rows: func(r *rowSet) [][]any { return r.blocks },
		columns: []string{"height", "hash", "prev_hash", "prev_height", "epoch_id", "author", "timestamp_nanos",
			"block_time", "gas_price", "total_supply", "protocol_version", "chunks_included", "view"}},
	{name: "skipped_heights", heightColumn: "next_height", rows: func(r *rowSet) [][]any { return r.skipped },
		columns: []string{"height", "next_height"}},
	{name: "block_chunks", heightColumn: "block_height", rows: func(r *rowSet) [][]any { return r.blockChunks },
		columns: []string{"block_height", "shard_id", "chunk_hash", "height_included"}},
	{name: "protocol_configs", rows: func(r *rowSet) [][]any { return r.protocols },
		conflict: `ON CONFLICT (protocol_version) DO UPDATE SET
			first_height = LEAST(protocol_configs.first_height, EXCLUDED.first_height)`,
		columns: []string{"protocol_version", "first_height", "view"}},
	{name: "epoch_protocol_versions", rows: func(r *rowSet) [][]any { return r.epochs },
		conflict: "ON CONFLICT (epoch_id) DO NOTHING", columns: []string{"epoch_id", "protocol_version"}},
}

// byShard returns the indexes of chunks in the order of their shard ids.
func byShard(chunks []bundle.Chunk) []int {
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(chunks[a].View.Header.ShardID, chunks[b].View.Header.ShardID)
	})
	return order
}
