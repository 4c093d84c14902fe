package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/nearline/nearline/near"
)

// chain is the simulated chain: its blocks, chunks, transactions, receipts
// and state history. It is built one height at a time by produce; every
// block's JSON is encoded once, when the block is made.
type chain struct {
	cfg        Config
	rng        *rand.Rand // skips, missing chunks, gas price, approvals
	txr        *rand.Rand // transaction generation
	st         *state
	validators []validator
	genesis    near.GenesisConfig
	vm         *contractVM // nil without contracts
	// layouts are the shard layouts, ascending by the epoch they start
	// (layout.go); layout is the one of the height being produced, the
	// per-shard slices below are by its shard indexes. pendingSplits are
	// the epochs still to split a shard at.
	layouts       []*shardLayout
	layout        *shardLayout
	pendingSplits []uint64

	genesisSupply near.U128
	totalSupply   near.U128
	gasPrice      near.U128

	blocks   []*block // produced blocks, ascending height
	byHeight map[uint64]*block
	byHash   map[string]*block
	skipped  map[uint64]bool
	chunks   map[string]*chunk
	// receiptChunks is where each receipt (action or data) first appears
	// in a chunk.
	receiptChunks map[string]receiptPlace
	txs           map[string]*txRecord
	receipts      map[string]*receiptRecord
	// received holds data receipts' payloads by data id (nil: the
	// producing receipt failed); postponed the receipts waiting for them.
	received  map[string]*[]byte
	postponed map[string]*receiptRecord
	// yields are the yields waiting for their data, by account, oldest
	// first (metayield.go).
	yields map[string][]yieldWait
	// execMu guards txs, receipts, received and postponed while the shards
	// of a block execute in parallel.
	execMu sync.Mutex

	next      uint64                  // the next height to produce
	pruned    uint64                  // heights below this are pruned (GC mode)
	lastChunk []*near.ChunkHeaderView // per shard, the last chunk header
	applied   []appliedChunk          // per shard, results of its last chunk
	outgoing  [][]*receiptRecord      // per shard, receipts made since its last chunk
	incoming  [][]*receiptRecord      // per shard, receipts waiting to execute
	gen       *generator
}

// block is one produced block with its encoded views.
type block struct {
	height  uint64
	hash    string
	view    near.BlockView
	json    json.RawMessage
	changes []change // sorted by trie key
	effects []near.StateChangeKindView
	// executed are, per shard, the receipts executed at this height;
	// instant, per shard, the instant receipts processed at it.
	executed   [][]*receiptRecord
	instant    [][]*receiptRecord
	epochID    string
	epochIndex uint64
	epochStart uint64 // the height of the epoch's first block
	ordinal    uint64
}

type chunk struct {
	hash   string
	height uint64 // height_created
	view   near.ChunkView
	json   json.RawMessage
}

// txRecord is a transaction and where it went.
type txRecord struct {
	view      near.SignedTransactionView
	outcome   near.ExecutionOutcomeWithIDView
	height    uint64
	receiptID string
}

// receiptRecord is a receipt and, once executed, its outcome.
// receiptPlace is a receipt's position in a chunk's receipts.
type receiptPlace struct {
	chunk *chunk
	index int
}

type receiptRecord struct {
	view     near.ReceiptView
	txHash   string
	executed bool
	outcome  near.ExecutionOutcomeWithIDView
	height   uint64 // execution height
	// prepaidGas is the function call gas the signer paid for.
	prepaidGas uint64
	// pessimistic is the gas price the signer was charged per gas.
	pessimistic near.U128
	// dist is the body of a GlobalContractDistribution receipt, else nil.
	dist *near.GlobalContractDistribution
}

// shardOf returns the index of the shard that holds account under the
// layout of the height being produced.
func (c *chain) shardOf(account string) int { return c.layout.index(account) }

// head returns the last produced block, or nil.
func (c *chain) head() *block {
	if len(c.blocks) == 0 {
		return nil
	}
	return c.blocks[len(c.blocks)-1]
}

// epochOf returns the epoch index and start height of a block at height.
// Epoch e covers heights [genesis + e*L, genesis + (e+1)*L).
func (c *chain) epochOf(height uint64) (uint64, uint64) {
	e := (height - c.cfg.GenesisHeight) / c.cfg.EpochLength
	return e, c.cfg.GenesisHeight + e*c.cfg.EpochLength
}

func (c *chain) epochID(e uint64) string {
	if e == 0 {
		return zeroHash
	}
	return hashOf([]byte("epoch"), u64bytes(c.cfg.Seed), u64bytes(e))
}

// produce makes the block at the next height, or records it as skipped.
func (c *chain) produce() error {
	h := c.next
	c.next++
	genesis := h == c.cfg.GenesisHeight
	if !genesis && c.rng.Float64() < c.cfg.SkipRate {
		c.skipped[h] = true
		return nil
	}
	prev := c.head()
	if e, _ := c.epochOf(h); !genesis && prev != nil && e > prev.epochIndex {
		if err := c.maybeReshard(h); err != nil {
			return err
		}
	}
	shards := len(c.layout.ids)
	produced := make([]bool, shards)
	for s := range produced {
		produced[s] = genesis || c.rng.Float64() >= c.cfg.MissingChunkRate
	}
	if !genesis {
		c.moveGasPrice()
	}
	prevHash := zeroHash
	if prev != nil {
		prevHash = prev.hash
	}
	if c.cfg.ForkAt != 0 && h == c.cfg.ForkAt {
		prevHash = hashOf([]byte("fork"), []byte(prevHash))
	}
	ex := &executor{c: c, height: h, prevHash: prevHash, shards: make([]*shardWork, shards), proposals: map[int][]near.ValidatorStakeView{}}
	for s := range ex.shards {
		ex.shards[s] = &shardWork{}
	}
	if !genesis {
		if e, _ := c.epochOf(h); prev != nil && e > prev.epochIndex {
			ex.epochRewards()
		}
		if err := ex.run(produced); err != nil {
			return fmt.Errorf("execute height %d: %w", h, err)
		}
	}

	// Chunks.
	headers := make([]near.ChunkHeaderView, shards)
	mask := make([]bool, shards)
	var newChunks []*chunk
	for s := 0; s < shards; s++ {
		if !produced[s] {
			headers[s] = *c.lastChunk[s]
			continue
		}
		mask[s] = true
		ch := c.makeChunk(h, s, prevHash, ex.shards[s], ex.proposals[s])
		headers[s] = ch.view.Header
		hdr := ch.view.Header
		c.lastChunk[s] = &hdr
		newChunks = append(newChunks, ch)
	}

	// An epoch starts at its first block, as nearcore's epoch_start_height
	// does: after its first height when that one was skipped.
	epoch, _ := c.epochOf(h)
	epochStart := h
	if prev != nil && prev.epochIndex == epoch {
		epochStart = prev.epochStart
	}
	b := &block{height: h, epochID: c.epochID(epoch), epochIndex: epoch, epochStart: epochStart, ordinal: uint64(len(c.blocks)) + 1}
	for _, ch := range newChunks {
		c.totalSupply = sub(c.totalSupply, ch.view.Header.BalanceBurnt)
	}
	b.view = near.BlockView{
		Author: c.validators[int(h%uint64(len(c.validators)))].account,
		Header: c.makeHeader(h, prev, prevHash, epoch, mask, headers, b.ordinal, newChunks),
		Chunks: headers,
	}
	b.hash = b.view.Header.Hash
	b.executed, b.instant = ex.byShard, ex.instantByShard
	b.changes = ex.sortedChanges()
	b.effects = effectsOf(b.changes)
	// Outcomes name the block they executed in.
	for _, r := range ex.executedReceipts {
		r.outcome.BlockHash = b.hash
	}
	for _, t := range ex.newTxs {
		t.outcome.BlockHash = b.hash
	}
	// Encode once; reads serve these bytes. (Chunk headers name only the
	// previous block, so nothing in a chunk depends on this block's hash.)
	var err error
	if b.json, err = json.Marshal(b.view); err != nil {
		return fmt.Errorf("encode block %d: %w", h, err)
	}
	for _, ch := range newChunks {
		if ch.json, err = json.Marshal(ch.view); err != nil {
			return fmt.Errorf("encode chunk %s: %w", ch.hash, err)
		}
		c.chunks[ch.hash] = ch
		for i, r := range ch.view.Receipts {
			if _, ok := c.receiptChunks[r.ReceiptID]; !ok {
				c.receiptChunks[r.ReceiptID] = receiptPlace{chunk: ch, index: i}
			}
		}
	}
	c.blocks = append(c.blocks, b)
	c.byHeight[h] = b
	c.byHash[b.hash] = b
	c.prune()
	return nil
}

// prune frees what a regular node has garbage-collected: the encoded
// blocks, their changes and the chunks below the earliest kept height.
// Headers stay (nearcore keeps them too); answers for these heights are
// errors anyway.
func (c *chain) prune() {
	if c.cfg.GCWindow == 0 {
		return
	}
	for ; c.pruned < c.earliest(); c.pruned++ {
		b := c.byHeight[c.pruned]
		if b == nil {
			continue
		}
		b.json, b.changes, b.effects, b.executed = nil, nil, nil, nil
		for _, hdr := range b.view.Chunks {
			if ch := c.chunks[hdr.ChunkHash]; ch != nil && ch.height < c.earliest() {
				delete(c.chunks, hdr.ChunkHash)
			}
		}
	}
}

// moveGasPrice moves the gas price by up to ±1% (the genesis
// gas_price_adjustment_rate), within [min_gas_price, 10 * min_gas_price].
func (c *chain) moveGasPrice() {
	step := c.rng.IntN(201) - 100 // -100..100 basis points of 1%
	p := c.gasPrice.Lo
	delta := p / 10_000 * uint64(abs(step))
	if step < 0 {
		p -= delta
	} else {
		p += delta
	}
	p = max(p, minGasPrice)
	p = min(p, 10*minGasPrice)
	c.gasPrice = near.U128From64(p)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// appliedChunk is what applying a shard's chunk produced, reported by the
// shard's next chunk header.
type appliedChunk struct {
	outcomeRoot string
	gasUsed     uint64
	burnt       near.U128
	congestion  near.CongestionInfo
}

// shardWork is what one shard did at one height.
type shardWork struct {
	txs      []near.SignedTransactionView
	receipts []near.ReceiptView // the chunk's receipts: outgoing from its previous chunk
	outcomes []string           // ids of the outcomes produced, in order
	gasUsed  uint64
	burnt    near.U128
}

func (c *chain) makeChunk(h uint64, s int, prevHash string, w *shardWork, proposals []near.ValidatorStakeView) *chunk {
	if w == nil {
		w = &shardWork{}
	}
	txRoot, outcomeRoot, receiptsRoot := zeroHash, zeroHash, hashOf([]byte("receipts-empty"))
	if len(w.txs) > 0 {
		ids := make([][]byte, 0, len(w.txs)+1)
		ids = append(ids, []byte("txroot"))
		for _, t := range w.txs {
			ids = append(ids, []byte(t.Hash))
		}
		txRoot = hashOf(ids...)
	}
	// As in nearcore, a chunk header reports the application of the
	// shard's previous chunk (outcome root, gas used, balance burnt); this
	// chunk's own results go into the shard's next chunk.
	prevApplied := c.applied[s]
	if len(w.outcomes) > 0 {
		outcomeRoot = hashJSON("outcomes", w.outcomes)
	}
	c.applied[s] = appliedChunk{outcomeRoot: outcomeRoot, gasUsed: w.gasUsed, burnt: w.burnt, congestion: c.congestionInfo(s)}
	outcomeRoot = prevApplied.outcomeRoot
	if outcomeRoot == "" {
		outcomeRoot = zeroHash
	}
	if len(w.receipts) > 0 {
		ids := make([]string, len(w.receipts))
		for i, r := range w.receipts {
			ids[i] = r.ReceiptID
		}
		receiptsRoot = hashJSON("receipts", ids)
	}
	hdr := near.ChunkHeaderView{
		PrevBlockHash:        prevHash,
		OutcomeRoot:          outcomeRoot,
		PrevStateRoot:        hashOf([]byte("state"), u64bytes(c.layout.ids[s]), []byte(prevHash)),
		EncodedMerkleRoot:    hashOf([]byte("encoded"), []byte(txRoot), []byte(receiptsRoot)),
		EncodedLength:        8 + uint64(len(w.txs))*200 + uint64(len(w.receipts))*150,
		HeightCreated:        h,
		HeightIncluded:       h,
		ShardID:              c.layout.ids[s],
		GasUsed:              prevApplied.gasUsed,
		GasLimit:             chunkGasLimit,
		RentPaid:             near.U128{},
		ValidatorReward:      near.U128{},
		BalanceBurnt:         prevApplied.burnt,
		OutgoingReceiptsRoot: receiptsRoot,
		TxRoot:               txRoot,
		ValidatorProposals:   rawProposals(proposals),
		CongestionInfo:       &prevApplied.congestion,
		BandwidthRequests:    json.RawMessage("null"),
	}
	hdr.ChunkHash = hashJSON("chunk", hdr)
	author := c.validators[(int(h)+s)%len(c.validators)].account
	hdr.Signature = signature(author, hdr.ChunkHash)
	txs := w.txs
	if txs == nil {
		txs = []near.SignedTransactionView{}
	}
	receipts := w.receipts
	if receipts == nil {
		receipts = []near.ReceiptView{}
	}
	return &chunk{hash: hdr.ChunkHash, height: h, view: near.ChunkView{Author: author, Header: hdr, Transactions: txs, Receipts: receipts}}
}

func (c *chain) makeHeader(h uint64, prev *block, prevHash string, epoch uint64, mask []bool, chunks []near.ChunkHeaderView, ordinal uint64, newChunks []*chunk) near.BlockHeaderView {
	// The block carries the stake proposals of its new chunks.
	proposals := []json.RawMessage{}
	for _, ch := range newChunks {
		proposals = append(proposals, ch.view.Header.ValidatorProposals...)
	}
	ts := uint64(c.genesisTime().UnixNano()) + (h-c.cfg.GenesisHeight)*1_000_000_000 + uint64(c.rng.IntN(50_000_000))
	included := uint64(0)
	for _, m := range mask {
		if m {
			included++
		}
	}
	var prevHeight *uint64
	lastFinal, lastDS := zeroHash, zeroHash
	if prev != nil {
		ph := prev.height
		prevHeight = &ph
		lastDS = prev.hash
		lastFinal = prev.hash
		if n := len(c.blocks); n >= 2 {
			lastFinal = c.blocks[n-2].hash
		}
	}
	approvals := []*string{} // the genesis block has none
	if prev != nil {
		approvals = make([]*string, len(c.validators))
		for i, v := range c.validators {
			if c.rng.IntN(10) == 0 {
				continue // this validator's approval did not arrive
			}
			sig := signature(v.account, "approval:"+prevHash)
			approvals[i] = &sig
		}
	}
	endorsements := make([]near.ByteArray, len(chunks))
	for i := range endorsements {
		endorsements[i] = near.ByteArray{byte(1<<len(c.validators)) - 1}
	}
	chunkHashes := make([]string, len(chunks))
	for i, ch := range chunks {
		chunkHashes[i] = ch.ChunkHash
	}
	bodyHash := hashJSON("body", chunkHashes)
	hdr := near.BlockHeaderView{
		Height:                h,
		PrevHeight:            prevHeight,
		EpochID:               c.epochID(epoch),
		NextEpochID:           c.epochID(epoch + 1),
		PrevHash:              prevHash,
		PrevStateRoot:         hashOf([]byte("stateroot"), []byte(prevHash)),
		BlockBodyHash:         &bodyHash,
		ChunkReceiptsRoot:     hashJSON("chunkreceipts", chunkHashes),
		ChunkHeadersRoot:      hashJSON("chunkheaders", chunkHashes),
		ChunkTxRoot:           hashJSON("chunktx", chunkHashes),
		OutcomeRoot:           hashJSON("outcomeroot", chunkHashes),
		ChunksIncluded:        included,
		ChallengesRoot:        zeroHash,
		Timestamp:             ts,
		TimestampNanosec:      strconv.FormatUint(ts, 10),
		RandomValue:           hashOf([]byte("random"), []byte(prevHash), u64bytes(c.cfg.Seed)),
		ValidatorProposals:    proposals,
		ChunkMask:             mask,
		GasPrice:              c.gasPrice,
		BlockOrdinal:          &ordinal,
		RentPaid:              near.U128{},
		ValidatorReward:       near.U128{},
		TotalSupply:           c.totalSupply,
		ChallengesResult:      []json.RawMessage{},
		LastFinalBlock:        lastFinal,
		LastDSFinalBlock:      lastDS,
		NextBPHash:            hashOf([]byte("nextbp"), u64bytes(epoch+1), u64bytes(c.cfg.Seed)),
		BlockMerkleRoot:       hashOf([]byte("merkle"), []byte(prevHash)),
		EpochSyncDataHash:     nil,
		Approvals:             approvals,
		LatestProtocolVersion: c.layout.protocol,
		ChunkEndorsements:     endorsements,
	}
	hdr.Hash = hashJSON("block", hdr)
	hdr.Signature = signature(c.validators[int(h%uint64(len(c.validators)))].account, hdr.Hash)
	return hdr
}

func sub(a, b near.U128) near.U128 {
	v, err := a.Sub(b)
	if err != nil {
		return near.U128{}
	}
	return v
}

func add(a, b near.U128) near.U128 {
	v, err := a.Add(b)
	if err != nil {
		return a
	}
	return v
}

func mul(a near.U128, m uint64) near.U128 {
	v, err := a.Mul64(m)
	if err != nil {
		return a
	}
	return v
}

func rawProposals(ps []near.ValidatorStakeView) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(ps))
	for _, p := range ps {
		b, _ := json.Marshal(p)
		out = append(out, b)
	}
	return out
}
