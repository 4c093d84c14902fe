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

// rowSet holds the rows of a batch, per table (each table's row type is
// defined with its columns, beside its builder).
type rowSet struct {
	blocks                              []blockRow
	skipped                             []skippedRow
	blockChunks                         []blockChunkRow
	chunks, olderChunks                 []chunkRow
	transactions                        []txRow
	receipts                            []receiptRow
	outcomes                            []outcomeRow
	txStatuses                          []txStatusRow
	accounts                            []accountRow
	accessKeys                          []accessKeyRow
	data                                []dataRow
	codeHistory                         []codeHistoryRow
	codes                               []codeRow
	protocols                           []protocolRow
	epochs                              []epochRow
	globalDistributions                 []distributionRow
	changeDocs                          []changeDocRow
	statusDocs                          []statusDocRow
	codec                               *packed.Codec
	seenCodes, seenProtocols, seenOlder map[string]bool
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
	r.blocks = append(r.blocks, blockRow{height: height, hash: h.Hash, prevHash: h.PrevHash, prevHeight: prevHeight,
		epochID: h.EpochID, author: b.Block.Author, timestamp: int64(h.Timestamp), time: time.Unix(0, int64(h.Timestamp)).UTC(),
		gasPrice: numeric(h.GasPrice), totalSupply: numeric(h.TotalSupply), protocol: int32(h.LatestProtocolVersion),
		chunksIncluded: int32(h.ChunksIncluded), view: blockJSON})
	for _, s := range b.Skipped {
		r.skipped = append(r.skipped, skippedRow{height: int64(s), next: height})
	}
	if b.ShardIDs != nil && len(b.ShardIDs) != len(b.Block.Chunks) {
		return fmt.Errorf("block %d: %d shard ids for %d chunks", h.Height, len(b.ShardIDs), len(b.Block.Chunks))
	}
	for i, c := range b.Block.Chunks {
		shard := c.ShardID
		if b.ShardIDs != nil {
			shard = b.ShardIDs[i] // the layout's shard at this index (a child repeating its parent's chunk)
		}
		r.blockChunks = append(r.blockChunks, blockChunkRow{height: height, shard: int32(shard), chunkHash: c.ChunkHash,
			included: int64(c.HeightIncluded)})
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
		r.epochs = append(r.epochs, epochRow{epochID: pc.EpochID, version: int32(pc.ProtocolVersion)})
		key := fmt.Sprint(pc.ProtocolVersion)
		if !r.seenProtocols[key] {
			r.seenProtocols[key] = true
			first := height
			if f, ok := r.epochFirst[pc.EpochID]; ok && f < first {
				first = f
			}
			r.protocols = append(r.protocols, protocolRow{version: int32(pc.ProtocolVersion), first: first, view: string(pc.JSON)})
		}
	}
	return nil
}

// blockTables are the block-level tables: the block, the heights skipped
// before it, its chunk per shard, and the protocol config of its epoch.
var blockTables = []table{
	newTable(tableSpec{name: "blocks", heightColumn: "height"}, func(r *rowSet) []blockRow { return r.blocks },
		col("height", func(w *copyWriter, r *blockRow) { w.int8(r.height) }),
		col("hash", func(w *copyWriter, r *blockRow) { w.text(r.hash) }),
		col("prev_hash", func(w *copyWriter, r *blockRow) { w.text(r.prevHash) }),
		col("prev_height", func(w *copyWriter, r *blockRow) { w.optInt8(r.prevHeight) }),
		col("epoch_id", func(w *copyWriter, r *blockRow) { w.text(r.epochID) }),
		col("author", func(w *copyWriter, r *blockRow) { w.text(r.author) }),
		col("timestamp_nanos", func(w *copyWriter, r *blockRow) { w.int8(r.timestamp) }),
		col("block_time", func(w *copyWriter, r *blockRow) { w.time(r.time) }),
		col("gas_price", func(w *copyWriter, r *blockRow) { w.numeric(r.gasPrice) }),
		col("total_supply", func(w *copyWriter, r *blockRow) { w.numeric(r.totalSupply) }),
		col("protocol_version", func(w *copyWriter, r *blockRow) { w.int4(r.protocol) }),
		col("chunks_included", func(w *copyWriter, r *blockRow) { w.int4(r.chunksIncluded) }),
		col("view", func(w *copyWriter, r *blockRow) { w.text(r.view) })),
	newTable(tableSpec{name: "skipped_heights", heightColumn: "next_height"}, func(r *rowSet) []skippedRow { return r.skipped },
		col("height", func(w *copyWriter, r *skippedRow) { w.int8(r.height) }),
		col("next_height", func(w *copyWriter, r *skippedRow) { w.int8(r.next) })),
	newTable(tableSpec{name: "block_chunks", heightColumn: "block_height"}, func(r *rowSet) []blockChunkRow { return r.blockChunks },
		col("block_height", func(w *copyWriter, r *blockChunkRow) { w.int8(r.height) }),
		col("shard_id", func(w *copyWriter, r *blockChunkRow) { w.int4(r.shard) }),
		col("chunk_hash", func(w *copyWriter, r *blockChunkRow) { w.text(r.chunkHash) }),
		col("height_included", func(w *copyWriter, r *blockChunkRow) { w.int8(r.included) })),
	newTable(tableSpec{name: "protocol_configs", conflict: `ON CONFLICT (protocol_version) DO UPDATE SET
			first_height = LEAST(protocol_configs.first_height, EXCLUDED.first_height)`},
		func(r *rowSet) []protocolRow { return r.protocols },
		col("protocol_version", func(w *copyWriter, r *protocolRow) { w.int4(r.version) }),
		col("first_height", func(w *copyWriter, r *protocolRow) { w.int8(r.first) }),
		col("view", func(w *copyWriter, r *protocolRow) { w.text(r.view) })),
	newTable(tableSpec{name: "epoch_protocol_versions", conflict: "ON CONFLICT (epoch_id) DO NOTHING"},
		func(r *rowSet) []epochRow { return r.epochs },
		col("epoch_id", func(w *copyWriter, r *epochRow) { w.text(r.epochID) }),
		col("protocol_version", func(w *copyWriter, r *epochRow) { w.int4(r.version) })),
}

// The block family's rows.
type (
	blockRow struct {
		height, timestamp        int64
		hash, prevHash           string
		prevHeight               *int64
		epochID, author          string
		time                     time.Time
		gasPrice, totalSupply    numericValue
		protocol, chunksIncluded int32
		view                     string // the block as served
	}
	skippedRow    struct{ height, next int64 }
	blockChunkRow struct {
		height, included int64
		shard            int32
		chunkHash        string
	}
	protocolRow struct {
		version int32
		first   int64
		view    string
	}
	epochRow struct {
		epochID string
		version int32
	}
)

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
