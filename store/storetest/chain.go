package storetest

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
)

// ChainConfig shapes a fake chain built from near structs.
type ChainConfig struct {
	// Start and End are the first and last heights (both produced).
	Start, End uint64
	// Shards per block. Default 2.
	Shards int
	// Skipped are heights with no block.
	Skipped map[uint64]bool
	// Missing marks (height, shard) pairs whose chunk is missing: the block
	// repeats the shard's previous chunk.
	Missing func(height uint64, shard int) bool
	// Edit, when set, changes each block as it is built: a test's own
	// receipts, changes or actions. The next block links to the edited one.
	Edit func(b *bundle.Bundle)
}

// Chain is a deterministic fake chain: each block carries per shard one
// transaction and one receipt, and changes accounts, access keys, contract
// data and code in a pattern that depends on the height only.
type Chain struct {
	cfg     ChainConfig
	bundles map[uint64]*bundle.Bundle
	heights []uint64
}

// Accounts used by the fake chain.
const (
	Alice    = "alice.near"
	Bob      = "bob.near"
	Contract = "contract.near"
	AliceKey = "ed25519:9W5Xu8dVKhu1h2Ymx5fQtXkmzSVyvwTyQuXbtjAaKqdT"
	OtherKey = "ed25519:2bCB8yDwsLqFx5bBXcaCFsTTbhKEcfnHxWC8UoytLEzh"
)

// FakeHash returns a deterministic base58 32-byte hash for a label.
func FakeHash(label string) string { return near.HashOf([]byte(label)).String() }

// NewChain builds the chain.
func NewChain(cfg ChainConfig) *Chain {
	if cfg.Shards == 0 {
		cfg.Shards = 2
	}
	if cfg.Missing == nil {
		cfg.Missing = func(uint64, int) bool { return false }
	}
	c := &Chain{cfg: cfg, bundles: map[uint64]*bundle.Bundle{}}
	var prev *bundle.Bundle
	lastChunk := make([]near.ChunkHeaderView, cfg.Shards)
	for h := cfg.Start; h <= cfg.End; h++ {
		if cfg.Skipped[h] {
			continue
		}
		b := c.block(h, prev, lastChunk)
		if cfg.Edit != nil {
			cfg.Edit(b)
		}
		c.bundles[h] = b
		c.heights = append(c.heights, h)
		prev = b
	}
	return c
}

// Heights returns the produced heights, ascending.
func (c *Chain) Heights() []uint64 { return c.heights }

// Bundle returns a copy of the bundle at height; ok is false for a skipped
// or unknown height.
func (c *Chain) Bundle(height uint64) (bundle.Bundle, bool) {
	b, ok := c.bundles[height]
	if !ok {
		return bundle.Bundle{}, false
	}
	return *b, true
}

// Batch returns the chain's blocks in [lo, hi], each with Skipped filled as
// the indexer fills it: the heights without a block since the block before
// (prev), or since lo when the batch begins a range (prev 0).
func (c *Chain) Batch(lo, hi, prev uint64) []bundle.Bundle {
	var out []bundle.Bundle
	from := lo
	if prev > 0 {
		from = prev + 1
	}
	for _, h := range c.heights {
		if h < lo || h > hi {
			continue
		}
		b := *c.bundles[h]
		b.Skipped = nil
		for k := from; k < h; k++ {
			b.Skipped = append(b.Skipped, k)
		}
		from = h + 1
		out = append(out, b)
	}
	return out
}

// BlockHash returns the hash of the block at height.
func BlockHash(height uint64) string { return FakeHash("block-" + strconv.FormatUint(height, 10)) }

func (c *Chain) block(h uint64, prev *bundle.Bundle, lastChunk []near.ChunkHeaderView) *bundle.Bundle {
	hdr := near.BlockHeaderView{
		Height:                h,
		EpochID:               FakeHash(fmt.Sprint("epoch-", h/100)),
		NextEpochID:           FakeHash(fmt.Sprint("epoch-", h/100+1)),
		Hash:                  BlockHash(h),
		PrevHash:              FakeHash("before-start"),
		Timestamp:             1_700_000_000_000_000_000 + h*1_000_000_000,
		TimestampNanosec:      strconv.FormatUint(1_700_000_000_000_000_000+h*1_000_000_000, 10),
		GasPrice:              near.U128From64(100_000_000),
		TotalSupply:           near.U128{Hi: 1, Lo: h},
		LatestProtocolVersion: 73,
		ValidatorProposals:    []json.RawMessage{},
		ChallengesResult:      []json.RawMessage{},
		Approvals:             []*string{},
	}
	if prev != nil {
		ph := prev.Height()
		hdr.PrevHeight = &ph
		hdr.PrevHash = prev.Block.Header.Hash
	}
	b := &bundle.Bundle{}
	for s := 0; s < c.cfg.Shards; s++ {
		hdr.ChunkMask = append(hdr.ChunkMask, !c.cfg.Missing(h, s))
		if c.cfg.Missing(h, s) && lastChunk[s].ChunkHash != "" {
			b.Block.Chunks = append(b.Block.Chunks, lastChunk[s])
			continue
		}
		chunk := c.chunk(h, s)
		lastChunk[s] = chunk.View.Header
		b.Block.Chunks = append(b.Block.Chunks, chunk.View.Header)
		hdr.ChunksIncluded++
		b.Chunks = append(b.Chunks, chunk)
		tx := chunk.View.Transactions[0]
		b.TxStatuses = append(b.TxStatuses, txStatus(h, tx))
	}
	b.Block.Author = "validator.near"
	b.Block.Header = hdr
	b.BlockJSON = mustMarshal(b.Block)
	b.Effects, b.Changes = changes(h)
	if h%100 == 0 || prev == nil || prev.Block.Header.EpochID != hdr.EpochID {
		b.ProtocolConfig = &bundle.ProtocolConfig{EpochID: hdr.EpochID, ProtocolVersion: 73,
			JSON: json.RawMessage(`{"protocol_version":73,"chain_id":"fake"}`)}
	}
	return b
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("storetest: encode fake chain: %v", err))
	}
	return b
}

func (c *Chain) chunk(h uint64, shard int) bundle.Chunk {
	label := fmt.Sprintf("%d-%d", h, shard)
	tx := near.SignedTransactionView{
		SignerID: Alice, PublicKey: AliceKey, Nonce: h*10 + uint64(shard), ReceiverID: Bob,
		Actions:   []near.ActionView{{Transfer: &near.TransferAction{Deposit: near.U128From64(h)}}},
		Signature: "ed25519:sig", Hash: FakeHash("tx-" + label),
	}
	rc := near.ReceiptView{PredecessorID: Alice, ReceiverID: Bob, ReceiptID: FakeHash("receipt-" + label),
		Receipt: near.ReceiptEnumView{Action: &near.ActionReceiptView{SignerID: Alice, SignerPublicKey: AliceKey,
			GasPrice: near.U128From64(1), OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{},
			Actions: []near.ActionView{{FunctionCall: &near.FunctionCallAction{MethodName: "ping", Args: []byte("{}"),
				Gas: 30_000_000_000_000, Deposit: near.U128From64(0)}}}}}}
	view := near.ChunkView{Author: "validator.near",
		Header: near.ChunkHeaderView{ChunkHash: FakeHash("chunk-" + label), HeightCreated: h, HeightIncluded: h,
			ShardID: uint64(shard), GasUsed: 1000, GasLimit: 1_000_000_000_000_000, BalanceBurnt: near.U128From64(7),
			ValidatorProposals: []json.RawMessage{}, BandwidthRequests: json.RawMessage("null")},
		Transactions: []near.SignedTransactionView{tx}, Receipts: []near.ReceiptView{rc}}
	return bundle.Chunk{View: view, JSON: mustMarshal(view)}
}

func txStatus(h uint64, tx near.SignedTransactionView) bundle.TxStatus {
	outcome := func(id string, at uint64) near.ExecutionOutcomeWithIDView {
		return near.ExecutionOutcomeWithIDView{Proof: []near.MerklePathItem{}, BlockHash: BlockHash(at), ID: id,
			Outcome: near.ExecutionOutcomeView{Logs: []string{}, ReceiptIDs: []string{}, GasBurnt: 424_000_000_000,
				TokensBurnt: near.U128From64(42), ExecutorID: Alice, Status: json.RawMessage(`{"SuccessValue":""}`),
				Metadata: json.RawMessage(`{"version":1,"gas_profile":null}`)}}
	}
	view := near.FinalExecutionOutcomeView{FinalExecutionStatus: "FINAL", Status: json.RawMessage(`{"SuccessValue":""}`),
		Transaction: tx, TransactionOutcome: outcome(tx.Hash, h),
		ReceiptsOutcome: []near.ExecutionOutcomeWithIDView{outcome(FakeHash("r-"+tx.Hash), h+1)}}
	return bundle.TxStatus{TxHash: tx.Hash, SignerID: tx.SignerID, JSON: mustMarshal(view),
		BlockHeights: map[string]uint64{BlockHash(h): h, BlockHash(h + 1): h + 1}}
}

// AliceAmount is alice's balance after block h.
func AliceAmount(h uint64) near.U128 { return near.U128{Hi: 5, Lo: 1_000_000 - h} }

// DataKey is the contract data key block h writes (or deletes when h%5==0).
func DataKey(h uint64) []byte { return []byte(fmt.Sprintf("k%d", h%3)) }

// DataValue is the value block h writes.
func DataValue(h uint64) []byte { return []byte(fmt.Sprintf("v%d", h)) }

// Code is the contract code block h deploys (when h%7 == 0).
func Code(h uint64) []byte { return []byte(fmt.Sprintf("\x00asm code %d", h%2)) }

func changes(h uint64) ([]near.StateChangeKindView, []bundle.StateChange) {
	cause := near.StateChangeCauseView{Type: "receipt_processing", ReceiptHash: FakeHash(fmt.Sprint("receipt-", h, "-0"))}
	txCause := near.StateChangeCauseView{Type: "transaction_processing", TxHash: FakeHash(fmt.Sprint("tx-", h, "-0"))}
	var out []bundle.StateChange
	add := func(c near.StateChangeCauseView, typ string, v near.StateChangeValue) {
		view := near.StateChangeWithCauseView{Cause: c, Type: typ, Change: v}
		out = append(out, bundle.StateChange{View: view, JSON: mustMarshal(view)})
	}
	effects := []near.StateChangeKindView{{Type: near.EffectAccountTouched, AccountID: Alice},
		{Type: near.EffectAccessKeyTouched, AccountID: Alice}, {Type: near.EffectDataTouched, AccountID: Contract}}
	// Two changes of alice's account in one block: the history keeps the last.
	mid := AliceAmount(h)
	mid.Lo += 500
	add(txCause, near.ChangeAccountUpdate, near.StateChangeValue{AccountID: Alice, Account: &near.Account{Amount: mid, CodeHash: "11111111111111111111111111111111"}})
	add(cause, near.ChangeAccountUpdate, near.StateChangeValue{AccountID: Alice, Account: &near.Account{Amount: AliceAmount(h), Locked: near.U128From64(h), CodeHash: "11111111111111111111111111111111", StorageUsage: 182 + h}})
	if h%4 == 0 {
		add(cause, near.ChangeAccountUpdate, near.StateChangeValue{AccountID: Bob, Account: &near.Account{Amount: near.U128From64(h), CodeHash: "11111111111111111111111111111111"}})
		effects = append(effects, near.StateChangeKindView{Type: near.EffectAccountTouched, AccountID: Bob})
	}
	pk := AliceKey
	add(txCause, near.ChangeAccessKeyUpdate, near.StateChangeValue{AccountID: Alice, PublicKey: &pk, AccessKey: &near.AccessKeyView{Nonce: h * 10}})
	other := OtherKey
	if h%6 == 0 {
		add(cause, near.ChangeAccessKeyDeletion, near.StateChangeValue{AccountID: Alice, PublicKey: &other})
	} else if h%3 == 0 {
		allowance := near.U128From64(h)
		add(cause, near.ChangeAccessKeyUpdate, near.StateChangeValue{AccountID: Alice, PublicKey: &other, AccessKey: &near.AccessKeyView{Nonce: h,
			Permission: near.AccessKeyPermission{FunctionCall: &near.FunctionCallPermission{Allowance: &allowance, ReceiverID: Contract, MethodNames: []string{"ping"}}}}})
	}
	key := DataKey(h)
	if h%5 == 0 {
		add(cause, near.ChangeDataDeletion, near.StateChangeValue{AccountID: Contract, KeyBase64: &key})
	} else {
		value := DataValue(h)
		add(cause, near.ChangeDataUpdate, near.StateChangeValue{AccountID: Contract, KeyBase64: &key, ValueBase64: &value})
	}
	if h%7 == 0 {
		code := Code(h)
		add(cause, near.ChangeContractCodeUpdate, near.StateChangeValue{AccountID: Contract, CodeBase64: &code})
		effects = append(effects, near.StateChangeKindView{Type: near.EffectContractCodeTouched, AccountID: Contract})
	}
	return effects, out
}
