package near

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// configHeadJSON sets the members genesis_config and
// EXPERIMENTAL_protocol_config begin with, in nearcore 2.x's order, each to
// a value of its own.
const configHeadJSON = `{
	"protocol_version": 2,
	"genesis_time": "s3",
	"chain_id": "s4",
	"genesis_height": 5,
	"num_block_producer_seats": 6,
	"num_block_producer_seats_per_shard": [8,9],
	"avg_hidden_validator_seats_per_shard": [11,12],
	"dynamic_resharding": true,
	"protocol_upgrade_stake_threshold": [15,16],
	"epoch_length": 17,
	"gas_limit": 18,
	"min_gas_price": "19000",
	"max_gas_price": "20000",
	"block_producer_kickout_threshold": 21,
	"chunk_producer_kickout_threshold": 22,
	"chunk_validator_only_kickout_threshold": 23,
	"online_min_threshold": [25,26],
	"online_max_threshold": [28,29],
	"gas_price_adjustment_rate": [31,32],
`

// genesisConfigJSON sets every field of GenesisConfig.
const genesisConfigJSON = configHeadJSON + `
	"validators": [{"account_id":"s35","public_key":"s36","amount":"37000"},{"account_id":"s39","public_key":"s40","amount":"41000"}],
	"transaction_validity_period": 42,
	"protocol_reward_rate": [44,45],
	"max_inflation_rate": [47,48],
	"total_supply": "49000",
	"num_blocks_per_year": 50,
	"protocol_treasury_account": "s51",
	"fishermen_threshold": "52000",
	"minimum_stake_divisor": 53,
	"shard_layout": {"V1":{"boundary_accounts":["m"],"shards_split_map":null,"to_parent_shard_map":[0,0],"version":1}},
	"num_chunk_only_producer_seats": 55,
	"minimum_validators_per_shard": 56,
	"max_kickout_stake_perc": 57,
	"minimum_stake_ratio": [59,60],
	"use_production_config": true,
	"num_chunk_producer_seats": 62,
	"num_chunk_validator_seats": 63,
	"chunk_producer_assignment_changes_limit": 64,
	"target_validator_mandates_per_shard": 65,
	"shuffle_shard_assignment_for_chunk_producers": true
}`

// protocolConfigJSON sets every field of ProtocolConfigView.
const protocolConfigJSON = configHeadJSON + `
	"runtime_config": {"storage_amount_per_byte":"1"},
	"transaction_validity_period": 134,
	"protocol_reward_rate": [136,137],
	"max_inflation_rate": [139,140],
	"num_blocks_per_year": 141,
	"protocol_treasury_account": "s142",
	"fishermen_threshold": "143000",
	"minimum_stake_divisor": 144,
	"shard_layout": {"V1":{"boundary_accounts":["m"],"shards_split_map":null,"to_parent_shard_map":[0,0],"version":1}},
	"minimum_validators_per_shard": 146,
	"max_kickout_stake_perc": 147,
	"minimum_stake_ratio": [149,150],
	"target_validator_mandates_per_shard": 151,
	"shuffle_shard_assignment_for_chunk_producers": true
}`

// TestConfigEncoding pins the members and their order in genesis_config,
// a genesis file and EXPERIMENTAL_protocol_config: a value decoded from a
// document that sets every field encodes to that document byte for byte.
func TestConfigEncoding(t *testing.T) {
	t.Parallel()
	compact := func(t *testing.T, doc string) []byte {
		var b bytes.Buffer
		require.NoError(t, json.Compact(&b, []byte(doc)))
		return b.Bytes()
	}
	for _, tc := range []struct {
		name  string
		value func() any // a fresh value to decode into
		doc   string
		check func(t *testing.T, v any)
	}{
		{"genesis_config", func() any { return new(GenesisConfig) }, genesisConfigJSON, func(t *testing.T, v any) {
			g := v.(*GenesisConfig)
			require.Equal(t, uint64(17), g.EpochLength)
			require.Equal(t, Rational{31, 32}, g.GasPriceAdjustmentRate)
			require.Len(t, g.Validators, 2)
		}},
		{"genesis file", func() any { return new(GenesisFile) },
			genesisConfigJSON[:len(genesisConfigJSON)-2] + `,"records":[]}`, func(t *testing.T, v any) {
				require.Equal(t, "s4", v.(*GenesisFile).ChainID)
			}},
		{"EXPERIMENTAL_protocol_config", func() any { return new(ProtocolConfigView) }, protocolConfigJSON, func(t *testing.T, v any) {
			p := v.(*ProtocolConfigView)
			require.Equal(t, uint32(2), p.ProtocolVersion)
			require.Equal(t, uint8(23), p.ChunkValidatorOnlyKickoutThreshold)
			require.Equal(t, uint64(134), p.TransactionValidityPeriod)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := compact(t, tc.doc)
			v := tc.value()
			require.NoError(t, UnmarshalExact(want, v))
			tc.check(t, v)
			got, err := json.Marshal(v)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		})
	}
}
