package near

import (
	"encoding/json"
	"errors"
)

// BlockView is the result of the `block` method.
type BlockView struct {
	Author string            `json:"author"`
	Header BlockHeaderView   `json:"header"`
	Chunks []ChunkHeaderView `json:"chunks"`
}

// BlockHeaderView is a block header as nearcore 2.x serves it.
type BlockHeaderView struct {
	Height                uint64            `json:"height"`
	PrevHeight            *uint64           `json:"prev_height"`
	EpochID               string            `json:"epoch_id"`
	NextEpochID           string            `json:"next_epoch_id"`
	Hash                  string            `json:"hash"`
	PrevHash              string            `json:"prev_hash"`
	PrevStateRoot         string            `json:"prev_state_root"`
	BlockBodyHash         *string           `json:"block_body_hash"`
	ChunkReceiptsRoot     string            `json:"chunk_receipts_root"`
	ChunkHeadersRoot      string            `json:"chunk_headers_root"`
	ChunkTxRoot           string            `json:"chunk_tx_root"`
	OutcomeRoot           string            `json:"outcome_root"`
	ChunksIncluded        uint64            `json:"chunks_included"`
	ChallengesRoot        string            `json:"challenges_root"`
	Timestamp             uint64            `json:"timestamp"`
	TimestampNanosec      string            `json:"timestamp_nanosec"`
	RandomValue           string            `json:"random_value"`
	ValidatorProposals    []json.RawMessage `json:"validator_proposals"`
	ChunkMask             []bool            `json:"chunk_mask"`
	GasPrice              U128              `json:"gas_price"`
	BlockOrdinal          *uint64           `json:"block_ordinal"`
	RentPaid              U128              `json:"rent_paid"`
	ValidatorReward       U128              `json:"validator_reward"`
	TotalSupply           U128              `json:"total_supply"`
	ChallengesResult      []json.RawMessage `json:"challenges_result"`
	LastFinalBlock        string            `json:"last_final_block"`
	LastDSFinalBlock      string            `json:"last_ds_final_block"`
	NextBPHash            string            `json:"next_bp_hash"`
	BlockMerkleRoot       string            `json:"block_merkle_root"`
	EpochSyncDataHash     *string           `json:"epoch_sync_data_hash"`
	Approvals             []*string         `json:"approvals"`
	Signature             string            `json:"signature"`
	LatestProtocolVersion uint32            `json:"latest_protocol_version"`
	ChunkEndorsements     []ByteArray       `json:"chunk_endorsements,omitempty"` // bitmaps as arrays of numbers
}

// ChunkHeaderView is a chunk header, in a block's `chunks` and a chunk's
// `header`.
type ChunkHeaderView struct {
	ChunkHash            string            `json:"chunk_hash"`
	PrevBlockHash        string            `json:"prev_block_hash"`
	OutcomeRoot          string            `json:"outcome_root"`
	PrevStateRoot        string            `json:"prev_state_root"`
	EncodedMerkleRoot    string            `json:"encoded_merkle_root"`
	EncodedLength        uint64            `json:"encoded_length"`
	HeightCreated        uint64            `json:"height_created"`
	HeightIncluded       uint64            `json:"height_included"`
	ShardID              uint64            `json:"shard_id"`
	GasUsed              uint64            `json:"gas_used"`
	GasLimit             uint64            `json:"gas_limit"`
	RentPaid             U128              `json:"rent_paid"`
	ValidatorReward      U128              `json:"validator_reward"`
	BalanceBurnt         U128              `json:"balance_burnt"`
	OutgoingReceiptsRoot string            `json:"outgoing_receipts_root"`
	TxRoot               string            `json:"tx_root"`
	ValidatorProposals   []json.RawMessage `json:"validator_proposals"`
	CongestionInfo       *CongestionInfo   `json:"congestion_info,omitempty"`
	BandwidthRequests    json.RawMessage   `json:"bandwidth_requests"`
	Signature            string            `json:"signature"`
}

// CongestionInfo is a chunk's congestion information (protocol 68+).
type CongestionInfo struct {
	DelayedReceiptsGas  U128   `json:"delayed_receipts_gas"`
	BufferedReceiptsGas U128   `json:"buffered_receipts_gas"`
	ReceiptBytes        uint64 `json:"receipt_bytes"`
	AllowedShard        uint16 `json:"allowed_shard"`
}

// ChunkView is the result of the `chunk` method.
type ChunkView struct {
	Author       string                  `json:"author"`
	Header       ChunkHeaderView         `json:"header"`
	Transactions []SignedTransactionView `json:"transactions"`
	Receipts     []ReceiptView           `json:"receipts"`
}

// GasPriceView is the result of the `gas_price` method.
type GasPriceView struct {
	GasPrice U128 `json:"gas_price"`
}

// HeaderHeight reads header.height from a `block` result, without decoding
// the rest of it.
func HeaderHeight(block json.RawMessage) (uint64, error) {
	var b struct {
		Header struct {
			Height *uint64 `json:"height"`
		} `json:"header"`
	}
	if err := json.Unmarshal(block, &b); err != nil || b.Header.Height == nil {
		return 0, errors.New("block without header.height")
	}
	return *b.Header.Height, nil
}
