package near

import (
	"encoding/json"
	"strconv"
)

// Rational is a [numerator, denominator] pair, as nearcore's configs write
// ratios (gas_price_adjustment_rate, protocol_reward_rate, ...).
type Rational [2]uint64

// ChainParams are the fields genesis_config and EXPERIMENTAL_protocol_config
// both begin with, in nearcore's order. Embedded first in GenesisConfig and
// ProtocolConfigView, its fields encode as theirs, ahead of the rest.
type ChainParams struct {
	ProtocolVersion                    uint32   `json:"protocol_version"`
	GenesisTime                        string   `json:"genesis_time"`
	ChainID                            string   `json:"chain_id"`
	GenesisHeight                      uint64   `json:"genesis_height"`
	NumBlockProducerSeats              uint64   `json:"num_block_producer_seats"`
	NumBlockProducerSeatsPerShard      []uint64 `json:"num_block_producer_seats_per_shard"`
	AvgHiddenValidatorSeatsPerShard    []uint64 `json:"avg_hidden_validator_seats_per_shard"`
	DynamicResharding                  bool     `json:"dynamic_resharding"`
	ProtocolUpgradeStakeThreshold      Rational `json:"protocol_upgrade_stake_threshold"`
	EpochLength                        uint64   `json:"epoch_length"`
	GasLimit                           uint64   `json:"gas_limit"`
	MinGasPrice                        U128     `json:"min_gas_price"`
	MaxGasPrice                        U128     `json:"max_gas_price"`
	BlockProducerKickoutThreshold      uint8    `json:"block_producer_kickout_threshold"`
	ChunkProducerKickoutThreshold      uint8    `json:"chunk_producer_kickout_threshold"`
	ChunkValidatorOnlyKickoutThreshold uint8    `json:"chunk_validator_only_kickout_threshold"`
	OnlineMinThreshold                 Rational `json:"online_min_threshold"`
	OnlineMaxThreshold                 Rational `json:"online_max_threshold"`
	GasPriceAdjustmentRate             Rational `json:"gas_price_adjustment_rate"`
}

// GenesisConfig is the result of `genesis_config` /
// `EXPERIMENTAL_genesis_config` and the config part of a nearcore
// genesis.json (nearcore 2.x field set and order).
type GenesisConfig struct {
	ChainParams
	Validators                              []AccountInfo `json:"validators"`
	TransactionValidityPeriod               uint64        `json:"transaction_validity_period"`
	ProtocolRewardRate                      Rational      `json:"protocol_reward_rate"`
	MaxInflationRate                        Rational      `json:"max_inflation_rate"`
	TotalSupply                             U128          `json:"total_supply"`
	NumBlocksPerYear                        uint64        `json:"num_blocks_per_year"`
	ProtocolTreasuryAccount                 string        `json:"protocol_treasury_account"`
	FishermenThreshold                      U128          `json:"fishermen_threshold"`
	MinimumStakeDivisor                     uint64        `json:"minimum_stake_divisor"`
	ShardLayout                             ShardLayout   `json:"shard_layout"`
	NumChunkOnlyProducerSeats               uint64        `json:"num_chunk_only_producer_seats"`
	MinimumValidatorsPerShard               uint64        `json:"minimum_validators_per_shard"`
	MaxKickoutStakePerc                     uint8         `json:"max_kickout_stake_perc"`
	MinimumStakeRatio                       Rational      `json:"minimum_stake_ratio"`
	UseProductionConfig                     bool          `json:"use_production_config"`
	NumChunkProducerSeats                   uint64        `json:"num_chunk_producer_seats"`
	NumChunkValidatorSeats                  uint64        `json:"num_chunk_validator_seats"`
	ChunkProducerAssignmentChangesLimit     uint64        `json:"chunk_producer_assignment_changes_limit"`
	TargetValidatorMandatesPerShard         uint64        `json:"target_validator_mandates_per_shard"`
	ShuffleShardAssignmentForChunkProducers bool          `json:"shuffle_shard_assignment_for_chunk_producers"`
}

// AccountInfo is a genesis validator: account, staking key and stake.
type AccountInfo struct {
	AccountID string `json:"account_id"`
	PublicKey string `json:"public_key"`
	Amount    U128   `json:"amount"`
}

// ShardLayout is nearcore's externally tagged shard layout; only V1 and V2
// are modelled ({"V1": {...}} or {"V2": {...}}).
type ShardLayout struct {
	V1 *ShardLayoutV1 `json:"V1,omitempty"`
	V2 *ShardLayoutV2 `json:"V2,omitempty"`
}

// ShardLayoutV1 splits accounts by boundary accounts: shard i holds the ids
// from boundary i-1 (inclusive) to boundary i (exclusive).
type ShardLayoutV1 struct {
	BoundaryAccounts []string   `json:"boundary_accounts"`
	ShardsSplitMap   [][]uint64 `json:"shards_split_map"`
	ToParentShardMap []uint64   `json:"to_parent_shard_map"`
	Version          uint32     `json:"version"`
}

// ShardLayoutV2 is V1's rule with explicit shard ids per index (nearcore
// 2.5+; mainnet from protocol 75). Members in nearcore's order; the maps
// have string keys, as nearcore serializes them; the split and parent
// maps are null when the layout was not derived from another.
type ShardLayoutV2 struct {
	BoundaryAccounts []string            `json:"boundary_accounts"`
	ShardIDs         []uint64            `json:"shard_ids"`
	IDToIndexMap     map[string]uint64   `json:"id_to_index_map"`
	IndexToIDMap     map[string]uint64   `json:"index_to_id_map"`
	ShardsSplitMap   map[string][]uint64 `json:"shards_split_map"`
	ShardsParentMap  map[string]uint64   `json:"shards_parent_map"`
	Version          uint32              `json:"version"`
}

// Boundaries returns the layout's boundary accounts.
func (l ShardLayout) Boundaries() []string {
	switch {
	case l.V1 != nil:
		return l.V1.BoundaryAccounts
	case l.V2 != nil:
		return l.V2.BoundaryAccounts
	}
	return nil
}

// ShardIDOf returns the id of the shard that holds accountID: its index
// under V1, the id at that index under V2.
func (l ShardLayout) ShardIDOf(accountID string) uint64 {
	i := ShardIndex(l.Boundaries(), accountID)
	if l.V2 != nil && i < len(l.V2.ShardIDs) {
		return l.V2.ShardIDs[i]
	}
	return uint64(i)
}

// ShardIDs returns the layout's shard ids by shard index: the indexes
// themselves under V1, shard_ids under V2; nil for a layout of another
// version.
func (l ShardLayout) ShardIDs() []uint64 {
	switch {
	case l.V2 != nil:
		return l.V2.ShardIDs
	case l.V1 != nil:
		ids := make([]uint64, len(l.V1.BoundaryAccounts)+1)
		for i := range ids {
			ids[i] = uint64(i)
		}
		return ids
	}
	return nil
}

// ParentOf returns the shard a V2 layout's shard split from; ok is false
// when the layout names no parent other than the shard itself.
func (l ShardLayout) ParentOf(shardID uint64) (uint64, bool) {
	if l.V2 == nil {
		return 0, false
	}
	p, ok := l.V2.ShardsParentMap[strconv.FormatUint(shardID, 10)]
	return p, ok && p != shardID
}

// FirstShardID is the first shard of the layout, where nearcore reads
// global contract code for view_global_contract_code.
func (l ShardLayout) FirstShardID() uint64 {
	if l.V2 != nil && len(l.V2.ShardIDs) > 0 {
		return l.V2.ShardIDs[0]
	}
	return 0
}

// ShardIndex returns the index of the shard that holds accountID under
// boundary accounts sorted ascending: the number of boundaries that are <=
// accountID (byte-wise comparison, as nearcore compares account ids).
func ShardIndex(boundaries []string, accountID string) int {
	i := 0
	for _, b := range boundaries {
		if accountID < b {
			break
		}
		i++
	}
	return i
}

// GenesisFile is a nearcore genesis.json: the config fields at top level
// and the state records.
type GenesisFile struct {
	GenesisConfig
	Records []StateRecord `json:"records"`
}

// GenesisAccount is an account in a genesis Account record. nearcore writes
// the account version ("V1", ...) beside the balance fields.
type GenesisAccount struct {
	Amount       U128   `json:"amount"`
	Locked       U128   `json:"locked"`
	CodeHash     string `json:"code_hash"`
	StorageUsage uint64 `json:"storage_usage"`
	Version      string `json:"version,omitempty"`
	// Extra holds the members the record carried beyond these (a newer
	// nearcore's global contract fields, say) as a JSON object, in their
	// order; decoding fills it and encoding writes it after version.
	Extra json.RawMessage `json:"-"`
}

// AccountRecord is {"Account": {"account_id", "account"}}.
type AccountRecord struct {
	AccountID string         `json:"account_id"`
	Account   GenesisAccount `json:"account"`
}

// AccessKeyRecord is {"AccessKey": {"account_id", "public_key", "access_key"}}.
type AccessKeyRecord struct {
	AccountID string        `json:"account_id"`
	PublicKey string        `json:"public_key"`
	AccessKey AccessKeyView `json:"access_key"`
}

// ContractRecord is {"Contract": {"account_id", "code"}}; Code is base64 in
// JSON.
type ContractRecord struct {
	AccountID string `json:"account_id"`
	Code      []byte `json:"code"`
}

// DataRecord is {"Data": {"account_id", "data_key", "value"}}; key and value
// are base64 in JSON.
type DataRecord struct {
	AccountID string `json:"account_id"`
	DataKey   []byte `json:"data_key"`
	Value     []byte `json:"value"`
}

// StateRecord is one genesis record. Exactly one field is set; it encodes as
// nearcore's externally tagged enum. Other keeps record kinds this package
// does not model (PostponedReceipt, ReceivedData, DelayedReceipt, ...) as
// raw JSON.
type StateRecord struct {
	Account   *AccountRecord
	AccessKey *AccessKeyRecord
	Contract  *ContractRecord
	Data      *DataRecord
	Other     json.RawMessage
}

// recordMembers are the record kinds StateRecord models.
var recordMembers = []member[StateRecord]{
	memberOf("Account", func(r *StateRecord) **AccountRecord { return &r.Account }),
	memberOf("AccessKey", func(r *StateRecord) **AccessKeyRecord { return &r.AccessKey }),
	memberOf("Contract", func(r *StateRecord) **ContractRecord { return &r.Contract }),
	memberOf("Data", func(r *StateRecord) **DataRecord { return &r.Data }),
}

// MarshalJSON encodes the record as {"<Kind>": {...}}.
func (r StateRecord) MarshalJSON() ([]byte, error) {
	return marshalTagged(&r, recordMembers, r.Other, "state record")
}

// UnmarshalJSON decodes {"<Kind>": {...}}.
func (r *StateRecord) UnmarshalJSON(data []byte) error {
	*r = StateRecord{}
	return unmarshalTagged(r, data, "state record", recordMembers, &r.Other)
}
