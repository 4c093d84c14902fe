package near

import "encoding/json"

// ProtocolConfigView is the result of `EXPERIMENTAL_protocol_config`: the
// genesis parameters in force at a block plus its runtime config.
// RuntimeConfig is kept as JSON (nearcore's RuntimeConfigView is large and
// changes with the protocol version).
type ProtocolConfigView struct {
	ChainParams
	RuntimeConfig                           json.RawMessage `json:"runtime_config"`
	TransactionValidityPeriod               uint64          `json:"transaction_validity_period"`
	ProtocolRewardRate                      Rational        `json:"protocol_reward_rate"`
	MaxInflationRate                        Rational        `json:"max_inflation_rate"`
	NumBlocksPerYear                        uint64          `json:"num_blocks_per_year"`
	ProtocolTreasuryAccount                 string          `json:"protocol_treasury_account"`
	FishermenThreshold                      U128            `json:"fishermen_threshold"`
	MinimumStakeDivisor                     uint64          `json:"minimum_stake_divisor"`
	ShardLayout                             ShardLayout     `json:"shard_layout"`
	MinimumValidatorsPerShard               uint64          `json:"minimum_validators_per_shard"`
	MaxKickoutStakePerc                     uint8           `json:"max_kickout_stake_perc"`
	MinimumStakeRatio                       Rational        `json:"minimum_stake_ratio"`
	TargetValidatorMandatesPerShard         uint64          `json:"target_validator_mandates_per_shard"`
	ShuffleShardAssignmentForChunkProducers bool            `json:"shuffle_shard_assignment_for_chunk_producers"`
}

// Fee is one action fee in gas: sending to the signer's own account
// (send_sir), to another account (send_not_sir), and executing.
type Fee struct {
	SendSir    uint64 `json:"send_sir"`
	SendNotSir uint64 `json:"send_not_sir"`
	Execution  uint64 `json:"execution"`
}
