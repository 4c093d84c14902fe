package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/nearline/nearline/near"
)

// yocto amounts.

// nearAmount returns n NEAR in yoctoNEAR (n*10^24).
func nearAmount(n uint64) near.U128 { return milliNEAR(n * 1000) }

// milliNEAR returns n thousandths of a NEAR in yoctoNEAR (n*10^21).
func milliNEAR(n uint64) near.U128 {
	v, _ := near.U128From64(1_000_000_000_000_000_000).Mul64(1000) // 10^21
	v, _ = v.Mul64(n)
	return v
}

// genesisTime is the chain's genesis time (Config.GenesisTime), in UTC.
func (c *chain) genesisTime() time.Time { return c.cfg.GenesisTime.UTC() }

// userNames are the named accounts every chain starts with.
var userNames = []string{
	"alice", "bob", "carol", "dave", "eve", "frank", "grace", "heidi", "ivan",
	"judy", "mallory", "niaj", "oscar", "peggy", "rupert", "sybil", "trent",
	"victor", "walter", "zoe",
}

const (
	treasury   = "near"
	numValidat = 4
	// minGasPrice is the genesis min_gas_price (0.1 Ggas price, as mainnet).
	minGasPrice = 100_000_000
	// chunkGasLimit is the gas limit of every chunk.
	chunkGasLimit = 1_000_000_000_000_000
)

type validator struct {
	account string
	key     string
	stake   near.U128
}

func validatorName(i int) string { return fmt.Sprintf("node%d.near", i) }

// genesisAccount is one account of the genesis state.
type genesisAccount struct {
	id       string
	amount   near.U128
	locked   near.U128
	contract string // contract kind deployed at genesis, "" for none
}

func genesisAccounts(cfg Config) []genesisAccount {
	var out []genesisAccount
	out = append(out, genesisAccount{id: treasury, amount: nearAmount(1_000_000_000)})
	for i := 0; i < numValidat; i++ {
		out = append(out, genesisAccount{id: validatorName(i), amount: nearAmount(10_000), locked: nearAmount(50_000 + uint64(i)*1_000)})
	}
	for _, u := range userNames {
		out = append(out, genesisAccount{id: u + ".near", amount: nearAmount(1_000_000)})
	}
	if !cfg.NoContracts {
		for _, c := range contractKinds {
			out = append(out, genesisAccount{id: c.account, amount: nearAmount(1_000), contract: c.name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// shardBoundaries picks boundary accounts that split the genesis accounts
// into shards of about equal size (ShardLayout V1 rule: a boundary is the
// first account of the next shard).
func shardBoundaries(accounts []genesisAccount, shards int) []string {
	var out []string
	for i := 1; i < shards; i++ {
		b := accounts[i*len(accounts)/shards].id
		if len(out) > 0 && out[len(out)-1] >= b {
			b = out[len(out)-1] + "0"
		}
		out = append(out, b)
	}
	return out
}

// genesisConfig builds the chain's genesis config.
func (c *chain) genesisConfig() near.GenesisConfig {
	shards := c.cfg.Shards
	perShard := make([]uint64, shards)
	hidden := make([]uint64, shards)
	for i := range perShard {
		perShard[i] = numValidat
	}
	var vals []near.AccountInfo
	for _, v := range c.validators {
		vals = append(vals, near.AccountInfo{AccountID: v.account, PublicKey: v.key, Amount: v.stake})
	}
	return near.GenesisConfig{
		ChainParams: near.ChainParams{
			ProtocolVersion:                    c.cfg.ProtocolVersion,
			GenesisTime:                        c.genesisTime().Format("2006-01-02T15:04:05.000000000Z"),
			ChainID:                            c.cfg.ChainID,
			GenesisHeight:                      c.cfg.GenesisHeight,
			NumBlockProducerSeats:              numValidat,
			NumBlockProducerSeatsPerShard:      perShard,
			AvgHiddenValidatorSeatsPerShard:    hidden,
			DynamicResharding:                  false,
			ProtocolUpgradeStakeThreshold:      near.Rational{4, 5},
			EpochLength:                        c.cfg.EpochLength,
			GasLimit:                           chunkGasLimit,
			MinGasPrice:                        near.U128From64(minGasPrice),
			MaxGasPrice:                        milliNEAR(10), // 10^22
			BlockProducerKickoutThreshold:      80,
			ChunkProducerKickoutThreshold:      80,
			ChunkValidatorOnlyKickoutThreshold: 70,
			OnlineMinThreshold:                 near.Rational{90, 100},
			OnlineMaxThreshold:                 near.Rational{99, 100},
			GasPriceAdjustmentRate:             near.Rational{1, 100},
		},
		Validators:                              vals,
		TransactionValidityPeriod:               100,
		ProtocolRewardRate:                      near.Rational{1, 10},
		MaxInflationRate:                        near.Rational{1, 20},
		TotalSupply:                             c.genesisSupply,
		NumBlocksPerYear:                        31_536_000,
		ProtocolTreasuryAccount:                 treasury,
		FishermenThreshold:                      nearAmount(10),
		MinimumStakeDivisor:                     10,
		ShardLayout:                             c.layouts[0].view,
		NumChunkOnlyProducerSeats:               0,
		MinimumValidatorsPerShard:               1,
		MaxKickoutStakePerc:                     100,
		MinimumStakeRatio:                       near.Rational{1, 6250},
		UseProductionConfig:                     false,
		NumChunkProducerSeats:                   numValidat,
		NumChunkValidatorSeats:                  numValidat,
		ChunkProducerAssignmentChangesLimit:     5,
		TargetValidatorMandatesPerShard:         68,
		ShuffleShardAssignmentForChunkProducers: false,
	}
}

// genesisRecords lists the genesis state as nearcore genesis records:
// per account, its Account, then Contract, AccessKeys and Data.
func (c *chain) genesisRecords() []near.StateRecord {
	g := c.cfg.GenesisHeight
	var ids []string
	for id := range c.st.accounts {
		if c.st.accountAt(id, g) != nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var out []near.StateRecord
	for _, id := range ids {
		a := c.st.accountAt(id, g)
		out = append(out, near.StateRecord{Account: &near.AccountRecord{AccountID: id, Account: near.GenesisAccount{
			Amount: a.Amount, Locked: a.Locked, CodeHash: a.CodeHash, StorageUsage: a.StorageUsage, Version: "V1",
		}}})
		if code, _ := c.st.codeAt(id, g); code != nil {
			out = append(out, near.StateRecord{Contract: &near.ContractRecord{AccountID: id, Code: code}})
		}
		for _, k := range c.st.keysAt(id, g) {
			out = append(out, near.StateRecord{AccessKey: &near.AccessKeyRecord{AccountID: id, PublicKey: k.PublicKey, AccessKey: k.AccessKey}})
		}
		for _, item := range c.st.stateAt(id, nil, g) {
			out = append(out, near.StateRecord{Data: &near.DataRecord{AccountID: id, DataKey: item.Key, Value: item.Value}})
		}
	}
	return out
}

// WriteGenesis writes the chain's genesis as a nearcore genesis.json (as a
// newer nearcore's with Config.NearcoreNext).
func (n *Node) WriteGenesis(path string) error {
	b, err := json.Marshal(n.Genesis())
	if err != nil {
		return fmt.Errorf("encode genesis: %w", err)
	}
	if n.cfg.NearcoreNext {
		if b, err = nearcoreNext(b); err != nil {
			return fmt.Errorf("encode genesis: %w", err)
		}
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, b, "", "  "); err != nil {
		return fmt.Errorf("encode genesis: %w", err)
	}
	if err := os.WriteFile(path, append(indented.Bytes(), '\n'), 0o644); err != nil {
		return fmt.Errorf("write genesis %s: %w", path, err)
	}
	return nil
}

// Genesis returns the chain's genesis: config and records.
func (n *Node) Genesis() near.GenesisFile {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return near.GenesisFile{GenesisConfig: n.chain.genesis, Records: n.chain.genesisRecords()}
}
