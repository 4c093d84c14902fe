package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
)

// newChain builds the genesis state and the genesis config; no block is
// produced yet.
func newChain(ctx context.Context, cfg Config, logger *slog.Logger) (*chain, error) {
	c := &chain{
		cfg:           cfg,
		rng:           newRand(cfg.Seed, streamChain),
		st:            newState(),
		byHeight:      map[uint64]*block{},
		byHash:        map[string]*block{},
		skipped:       map[uint64]bool{},
		chunks:        map[string]*chunk{},
		receiptChunks: map[string]receiptPlace{},
		txs:           map[string]*txRecord{},
		receipts:      map[string]*receiptRecord{},
		received:      map[string]*[]byte{},
		postponed:     map[string]*receiptRecord{},
		yields:        map[string][]yieldWait{},
		next:          cfg.GenesisHeight,
		lastChunk:     make([]*near.ChunkHeaderView, cfg.Shards),
		applied:       make([]appliedChunk, cfg.Shards),
		outgoing:      make([][]*receiptRecord, cfg.Shards),
		incoming:      make([][]*receiptRecord, cfg.Shards),
		gasPrice:      near.U128From64(minGasPrice * 2),
	}
	if !cfg.NoContracts {
		rt, owned := cfg.Runtime, false
		if rt == nil {
			var err error
			if rt, err = nearvm.New(ctx, nearvm.Config{}, logger); err != nil {
				return nil, fmt.Errorf("start contract runtime: %w", err)
			}
			owned = true
		}
		c.vm = &contractVM{rt: rt, owned: owned}
	}
	accounts := genesisAccounts(cfg)
	c.layout = genesisLayout(shardBoundaries(accounts, cfg.Shards), cfg.ProtocolVersion)
	c.layouts = []*shardLayout{c.layout}
	var err error
	if c.pendingSplits, err = reshardEpochs(cfg); err != nil {
		return nil, err
	}
	for i := 0; i < numValidat; i++ {
		id := validatorName(i)
		for _, a := range accounts {
			if a.id == id {
				c.validators = append(c.validators, validator{account: id, key: publicKey(cfg.Seed, id, 0), stake: a.locked})
			}
		}
	}
	g := cfg.GenesisHeight
	supply := near.U128{}
	for _, a := range accounts {
		acc := &near.Account{Amount: a.amount, Locked: a.locked, CodeHash: zeroHash, StorageUsage: storageAccount}
		pk := publicKey(cfg.Seed, a.id, 0)
		key := near.AccessKeyView{Permission: near.AccessKeyPermission{}}
		acc.StorageUsage += accessKeyStorage(pk, key)
		c.st.putKey(a.id, pk, g, &key)
		if a.contract != "" {
			if err := c.deployGenesisContract(ctx, a, acc); err != nil {
				return nil, err
			}
		}
		c.st.putAccount(a.id, g, acc)
		supply = add(supply, add(acc.Amount, acc.Locked))
	}
	c.genesisSupply, c.totalSupply = supply, supply
	c.genesis = c.genesisConfig()
	if c.layout.config, err = c.protocolConfig(c.layout); err != nil {
		return nil, err
	}
	c.gen = newGenerator(c)
	return c, nil
}

func (c *chain) deployGenesisContract(ctx context.Context, a genesisAccount, acc *near.Account) error {
	code, err := contractCode(a.contract)
	if err != nil {
		return err
	}
	g := c.cfg.GenesisHeight
	hash := near.HashOf(code).String()
	c.st.putCode(a.id, g, code, hash)
	acc.CodeHash = hash
	acc.StorageUsage += uint64(len(code))
	var kind contractKind
	for _, k := range contractKinds {
		if k.name == a.contract {
			kind = k
		}
	}
	if kind.initFn == "" {
		return nil
	}
	calls := append([]genesisCall{{method: kind.initFn, args: kind.initArgs}}, kind.setup...)
	for _, call := range calls {
		out, err := c.vm.rt.Call(ctx, code, hash, call.method, nearvm.Context{
			CurrentAccountID: a.id, SignerAccountID: a.id, PredecessorAccountID: a.id,
			SignerAccountPK: near.PublicKeyBorsh(publicKey(c.cfg.Seed, a.id, 0)),
			Input:           []byte(call.args), BlockHeight: g,
			BlockTimestamp: uint64(c.genesisTime().UnixNano()), StorageUsage: acc.StorageUsage,
			AccountBalance: toVM(acc.Amount), PrepaidGas: 100_000_000_000_000,
			AttachedDeposit: toVM(milliNEAR(call.depositMilli)),
			RandomSeed:      hashBytes([]byte("genesis"), u64bytes(c.cfg.Seed)),
		}, stateStorage{c.st, a.id, g})
		if err != nil {
			return fmt.Errorf("genesis call %s on %s: %w", call.method, a.id, err)
		}
		for _, w := range out.Writes {
			if w.Removed {
				c.st.putData(a.id, w.Key, g, nil)
			} else {
				c.st.putData(a.id, w.Key, g, w.Value)
			}
		}
		acc.StorageUsage = out.StorageUsage
	}
	return nil
}

// protocolConfig builds the EXPERIMENTAL_protocol_config result of the
// epochs under layout l: the genesis parameters with l's protocol version,
// shard layout and per-shard seats.
func (c *chain) protocolConfig(l *shardLayout) (json.RawMessage, error) {
	g := c.genesis
	if len(l.ids) != len(g.NumBlockProducerSeatsPerShard) {
		g.NumBlockProducerSeatsPerShard = make([]uint64, len(l.ids))
		for i := range g.NumBlockProducerSeatsPerShard {
			g.NumBlockProducerSeatsPerShard[i] = numValidat
		}
		g.AvgHiddenValidatorSeatsPerShard = make([]uint64, len(l.ids))
	}
	g.ProtocolVersion, g.ShardLayout = l.protocol, l.view
	fees := map[string]any{
		"storage_amount_per_byte": "10000000000000000000",
		"transaction_costs": map[string]any{
			"action_receipt_creation_config": feeReceipt.view(),
			"data_receipt_creation_config":   map[string]any{"base_cost": feeDataReceipt.view(), "cost_per_byte": feeDataPerByte.view()},
			"action_creation_config": map[string]any{
				"create_account_cost":           feeCreateAccount.view(),
				"deploy_contract_cost":          feeDeploy.view(),
				"deploy_contract_cost_per_byte": feeDeployPerByte.view(),
				"function_call_cost":            feeFunctionCall.view(),
				"function_call_cost_per_byte":   feeFnCallPerByte.view(),
				"transfer_cost":                 feeTransfer.view(),
				"stake_cost":                    feeStake.view(),
				"add_key_cost": map[string]any{
					"full_access_cost":            feeAddFullKey.view(),
					"function_call_cost":          feeAddFnKey.view(),
					"function_call_cost_per_byte": feeAddFnKeyByte.view(),
				},
				"delete_key_cost":     feeDeleteKey.view(),
				"delete_account_cost": feeDeleteAccount.view(),
				"delegate_cost":       feeDelegate.view(),
			},
			"storage_usage_config":                  map[string]any{"num_bytes_account": storageAccount, "num_extra_bytes_record": storageExtraRecord},
			"burnt_gas_reward":                      near.Rational{3, 10},
			"pessimistic_gas_price_inflation_ratio": near.Rational{103, 100},
		},
		"wasm_config":               vmConfigView(c.cfg.YieldTimeout),
		"account_creation_config":   map[string]any{"min_allowed_top_level_account_length": 65, "registrar_account_id": "registrar"},
		"congestion_control_config": congestionConfigView(),
		"witness_config":            map[string]any{"main_storage_proof_size_soft_limit": 4_000_000, "combined_transactions_size_limit": 4_194_304, "new_transactions_validation_state_size_soft_limit": 572_864},
	}
	rc, err := json.Marshal(fees)
	if err != nil {
		return nil, fmt.Errorf("encode runtime config: %w", err)
	}
	view := near.ProtocolConfigView{
		ChainParams: g.ChainParams, RuntimeConfig: rc, TransactionValidityPeriod: g.TransactionValidityPeriod,
		ProtocolRewardRate: g.ProtocolRewardRate, MaxInflationRate: g.MaxInflationRate, NumBlocksPerYear: g.NumBlocksPerYear,
		ProtocolTreasuryAccount: g.ProtocolTreasuryAccount, FishermenThreshold: g.FishermenThreshold,
		MinimumStakeDivisor: g.MinimumStakeDivisor, ShardLayout: g.ShardLayout,
		MinimumValidatorsPerShard: g.MinimumValidatorsPerShard, MaxKickoutStakePerc: g.MaxKickoutStakePerc,
		MinimumStakeRatio: g.MinimumStakeRatio, TargetValidatorMandatesPerShard: g.TargetValidatorMandatesPerShard,
		ShuffleShardAssignmentForChunkProducers: g.ShuffleShardAssignmentForChunkProducers,
	}
	b, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("encode protocol config: %w", err)
	}
	return b, nil
}

func vmConfigView(yieldTimeout uint64) map[string]any {
	ext := map[string]uint64{}
	for name, v := range extCosts {
		ext[name] = v
	}
	return map[string]any{
		"ext_costs":                 ext,
		"grow_mem_cost":             1,
		"regular_op_cost":           822_756,
		"linear_op_base_cost":       0,
		"linear_op_unit_cost":       0,
		"vm_kind":                   "NearVm",
		"discard_custom_sections":   true,
		"saturating_float_to_int":   true,
		"global_contract_host_fns":  false,
		"reftypes_bulk_memory":      false,
		"storage_get_mode":          "FlatStorage",
		"fix_contract_loading_cost": true,
		"implicit_account_creation": true,
		"eth_implicit_accounts":     true,
		"deterministic_account_ids": false,
		"limit_config": map[string]any{
			"max_gas_burnt": 300_000_000_000_000, "max_stack_height": 262_144, "initial_memory_pages": 1024,
			"max_memory_pages": 2048, "registers_memory_limit": 1_073_741_824, "max_register_size": 104_857_600,
			"max_number_registers": 100, "max_number_logs": 100, "max_total_log_length": 16_384,
			"max_total_prepaid_gas": 300_000_000_000_000, "max_actions_per_receipt": 100,
			"max_number_bytes_method_names": 2000, "max_length_method_name": 256, "max_arguments_length": 4_194_304,
			"max_length_returned_data": 4_194_304, "max_contract_size": 4_194_304, "max_transaction_size": 1_572_864,
			"max_receipt_size": 4_194_304, "max_length_storage_key": 2048, "max_length_storage_value": 4_194_304,
			"max_promises_per_function_call_action": 1024, "max_number_input_data_dependencies": 128,
			"max_functions_number_per_contract": 10_000, "max_locals_per_contract": 1_000_000,
			"account_id_validity_rules_version": 1, "yield_timeout_length_in_blocks": yieldTimeout, "max_yield_payload_size": 1024,
			"per_receipt_storage_proof_size_limit": 4_000_000, "max_tables_per_contract": 1, "max_elements_per_contract_table": 10_000,
		},
	}
}

func congestionConfigView() map[string]any {
	return map[string]any{
		"max_congestion_incoming_gas": uint64(400_000_000_000_000_000), "max_congestion_outgoing_gas": uint64(10_000_000_000_000_000),
		"max_congestion_memory_consumption": 1_000_000_000, "max_congestion_missed_chunks": 5,
		"max_outgoing_gas": uint64(300_000_000_000_000_000), "min_outgoing_gas": uint64(1_000_000_000_000_000),
		"allowed_shard_outgoing_gas": uint64(1_000_000_000_000_000), "max_tx_gas": uint64(500_000_000_000_000),
		"min_tx_gas": uint64(20_000_000_000_000), "reject_tx_congestion_threshold": 0.8,
		"outgoing_receipts_usual_size_limit": 102_400, "outgoing_receipts_big_size_limit": 4_718_592,
	}
}

// extCosts are the host function costs of the simulated protocol.
var extCosts = map[string]uint64{
	"base": 264_768_111, "contract_loading_base": 35_445_963, "contract_loading_bytes": 1_089_295,
	"read_memory_base": 2_609_863_200, "read_memory_byte": 3_801_333, "write_memory_base": 2_803_794_861,
	"write_memory_byte": 2_723_772, "read_register_base": 2_517_165_186, "read_register_byte": 98_562,
	"write_register_base": 2_865_522_486, "write_register_byte": 3_801_564, "utf8_decoding_base": 3_111_779_061,
	"utf8_decoding_byte": 291_580_479, "utf16_decoding_base": 3_543_313_050, "utf16_decoding_byte": 163_577_493,
	"sha256_base": 4_540_970_250, "sha256_byte": 24_117_351, "keccak256_base": 5_879_491_275,
	"keccak256_byte": 21_471_105, "keccak512_base": 5_811_388_236, "keccak512_byte": 36_649_701,
	"ripemd160_base": 853_675_086, "ripemd160_block": 680_107_584, "ed25519_verify_base": 210_000_000_000,
	"ed25519_verify_byte": 9_000_000, "ecrecover_base": 278_821_988_457, "log_base": 3_543_313_050,
	"log_byte": 13_198_791, "storage_write_base": 64_196_736_000, "storage_write_key_byte": 70_482_867,
	"storage_write_value_byte": 31_018_539, "storage_write_evicted_byte": 32_117_595,
	"storage_read_base": 56_356_845_750, "storage_read_key_byte": 30_952_533, "storage_read_value_byte": 5_611_005,
	"storage_large_read_overhead_base": 1, "storage_large_read_overhead_byte": 1,
	"storage_remove_base": 53_473_030_500, "storage_remove_key_byte": 38_220_384, "storage_remove_ret_value_byte": 11_531_556,
	"storage_has_key_base": 54_039_896_625, "storage_has_key_byte": 30_790_845,
	"storage_iter_create_prefix_base": 0, "storage_iter_create_prefix_byte": 0, "storage_iter_create_range_base": 0,
	"storage_iter_create_from_byte": 0, "storage_iter_create_to_byte": 0, "storage_iter_next_base": 0,
	"storage_iter_next_key_byte": 0, "storage_iter_next_value_byte": 0, "touching_trie_node": 16_101_955_926,
	"read_cached_trie_node": 2_280_000_000, "promise_and_base": 1_465_013_400, "promise_and_per_promise": 5_452_176,
	"promise_return": 560_152_386, "validator_stake_base": 911_834_726_400, "validator_total_stake_base": 911_834_726_400,
	"contract_compile_base": 0, "contract_compile_bytes": 0, "alt_bn128_g1_multiexp_base": 713_000_000_000,
	"alt_bn128_g1_multiexp_element": 320_000_000_000, "alt_bn128_g1_sum_base": 3_000_000_000,
	"alt_bn128_g1_sum_element": 5_000_000_000, "alt_bn128_pairing_check_base": 9_686_000_000_000,
	"alt_bn128_pairing_check_element": 5_102_000_000_000, "yield_create_base": 153_411_779_276,
	"yield_create_byte": 15_643_988, "yield_resume_base": 1_195_627_285_210, "yield_resume_byte": 47_683_715,
	"bls12381_p1_sum_base": 16_500_000_000, "bls12381_p1_sum_element": 6_000_000_000,
	"bls12381_p2_sum_base": 18_600_000_000, "bls12381_p2_sum_element": 15_000_000_000,
	"bls12381_g1_multiexp_base": 16_500_000_000, "bls12381_g1_multiexp_element": 930_000_000_000,
	"bls12381_g2_multiexp_base": 18_600_000_000, "bls12381_g2_multiexp_element": 1_995_000_000_000,
	"bls12381_map_fp_to_g1_base": 1_500_000_000, "bls12381_map_fp_to_g1_element": 252_000_000_000,
	"bls12381_map_fp2_to_g2_base": 1_500_000_000, "bls12381_map_fp2_to_g2_element": 900_000_000_000,
	"bls12381_pairing_base": 2_130_000_000_000, "bls12381_pairing_element": 2_130_000_000_000,
	"bls12381_p1_decompress_base": 15_000_000_000, "bls12381_p1_decompress_element": 81_000_000_000,
	"bls12381_p2_decompress_base": 15_000_000_000, "bls12381_p2_decompress_element": 165_000_000_000,
}
