package near

import "encoding/json"

// EpochValidatorInfo is the result of `validators`.
type EpochValidatorInfo struct {
	CurrentValidators []CurrentEpochValidatorInfo `json:"current_validators"`
	NextValidators    []NextEpochValidatorInfo    `json:"next_validators"`
	CurrentFishermen  []ValidatorStakeView        `json:"current_fishermen"`
	NextFishermen     []ValidatorStakeView        `json:"next_fishermen"`
	CurrentProposals  []ValidatorStakeView        `json:"current_proposals"`
	PrevEpochKickout  []ValidatorKickoutView      `json:"prev_epoch_kickout"`
	EpochStartHeight  uint64                      `json:"epoch_start_height"`
	EpochHeight       uint64                      `json:"epoch_height"`
}

// CurrentEpochValidatorInfo is a validator of the current epoch with its
// production counters.
type CurrentEpochValidatorInfo struct {
	AccountID                       string   `json:"account_id"`
	PublicKey                       string   `json:"public_key"`
	IsSlashed                       bool     `json:"is_slashed"`
	Stake                           U128     `json:"stake"`
	Shards                          []uint64 `json:"shards"`
	NumProducedBlocks               uint64   `json:"num_produced_blocks"`
	NumExpectedBlocks               uint64   `json:"num_expected_blocks"`
	NumProducedChunks               uint64   `json:"num_produced_chunks"`
	NumExpectedChunks               uint64   `json:"num_expected_chunks"`
	NumProducedChunksPerShard       []uint64 `json:"num_produced_chunks_per_shard"`
	NumExpectedChunksPerShard       []uint64 `json:"num_expected_chunks_per_shard"`
	NumProducedEndorsements         uint64   `json:"num_produced_endorsements"`
	NumExpectedEndorsements         uint64   `json:"num_expected_endorsements"`
	NumProducedEndorsementsPerShard []uint64 `json:"num_produced_endorsements_per_shard"`
	NumExpectedEndorsementsPerShard []uint64 `json:"num_expected_endorsements_per_shard"`
}

// NextEpochValidatorInfo is a validator of the next epoch.
type NextEpochValidatorInfo struct {
	AccountID string   `json:"account_id"`
	PublicKey string   `json:"public_key"`
	Stake     U128     `json:"stake"`
	Shards    []uint64 `json:"shards"`
}

// ValidatorStakeView is a proposal or fisherman: account, key and stake.
type ValidatorStakeView struct {
	AccountID                   string `json:"account_id"`
	PublicKey                   string `json:"public_key"`
	Stake                       U128   `json:"stake"`
	ValidatorStakeStructVersion string `json:"validator_stake_struct_version"`
}

// ValidatorKickoutView is a validator kicked out in the previous epoch and
// why ({"NotEnoughBlocks": {"produced": n, "expected": m}}, ...).
type ValidatorKickoutView struct {
	AccountID string          `json:"account_id"`
	Reason    json.RawMessage `json:"reason"`
}
