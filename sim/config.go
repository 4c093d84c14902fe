package sim

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/nearline/nearline/internal/bounds"
	"github.com/nearline/nearline/nearvm"
)

// Config describes the simulated chain and node. The chain's content
// depends only on the fields marked "chain"; faults never change it.
type Config struct {
	// Seed selects the chain (chain). Same seed and chain fields give the
	// same chain, byte for byte. Default 0.
	Seed uint64
	// Shards is the number of shards (chain). Default DefaultShards; at
	// most 16.
	Shards int
	// GenesisHeight is the height of the genesis block (chain). Default 0.
	GenesisHeight uint64
	// GenesisTime is the genesis block's time (chain); a block's timestamp
	// is it plus one second per height above the genesis (and under 50 ms
	// of jitter), whatever BlockTime is. Default DefaultGenesisTime, fixed,
	// so the chain does not depend on when it runs.
	GenesisTime time.Time
	// EpochLength is the epoch length in heights (chain). Default
	// DefaultEpochLength.
	EpochLength uint64
	// ProtocolVersion is the protocol version the chain runs (chain).
	// Default DefaultProtocolVersion.
	ProtocolVersion uint32
	// ChainID names the chain (chain). Default DefaultChainID.
	ChainID string
	// SkipRate is the fraction of heights with no block (chain). Default 0.
	SkipRate float64
	// MissingChunkRate is the fraction of (block, shard) pairs whose chunk
	// was not produced (chain). Default 0.
	MissingChunkRate float64
	// TxsPerBlock is the mean number of transactions per block (chain).
	// Default 0 (no transactions); DefaultConfig uses 4.
	TxsPerBlock int
	// DeployRate, when positive, is the fraction of generated transactions
	// that deploy a contract (chain). Default 0: the default mix, about 2%
	// (mainnet sees about 0.1%: bench/ uses 0.001).
	DeployRate float64
	// NoContracts leaves the WASM contracts out of genesis and of the
	// generated transactions (chain). Default false.
	NoContracts bool
	// YieldTimeout is the protocol's yield_timeout_length_in_blocks: a
	// yielded promise not resumed within it runs with a failed result
	// (chain). Default DefaultYieldTimeout, nearcore's.
	YieldTimeout uint64
	// ReshardAt lists heights; at the first epoch start at or after each,
	// one shard splits in two under a version-2 shard layout and the
	// protocol version moves up by one (chain; see layout.go). Each must
	// be above GenesisHeight and fall in an epoch of its own. Default none:
	// the genesis layout throughout.
	ReshardAt []uint64
	// SplitShards names, for each height of ReshardAt in order, the id of
	// the shard that splits there (chain). A split without one splits the
	// shard holding the most accounts. Default none. Protocol86Config
	// uses it to split as mainnet did.
	SplitShards []uint64
	// ForkAt, when non-zero, serves a different chain from this height on:
	// block ForkAt's prev_hash does not match block ForkAt-1 (chain).
	ForkAt uint64

	// BlockTime is the pause between blocks in Run; 0 produces every block
	// up to MaxHeight at once. Default 0.
	BlockTime time.Duration
	// MaxHeight stops production at this height; 0 means no limit (only
	// with BlockTime > 0). Default 0.
	MaxHeight uint64
	// FinalityLag, when non-zero, makes `final` select the block this many
	// blocks behind the head (and `near-final` the one before the head)
	// while blocks are being produced, as nearcore's finality lags its tip;
	// once MaxHeight is produced the tip is final. Default 0: every block is
	// final at once.
	FinalityLag uint64
	// GCWindow, when non-zero, makes the node a regular (non-archival) node
	// that answers for the last GCWindow heights only. Default 0 (archival).
	GCWindow uint64

	// RPCAddr is the address `status` reports as rpc_addr. Default
	// DefaultRPCAddr.
	RPCAddr string
	// ViewStateLimit is view_state's limit in bytes of contract state
	// (storage usage minus code size), as nearcore's
	// trie_viewer_state_size_limit: above it the query fails with
	// TOO_LARGE_CONTRACT_STATE. Default DefaultViewStateLimit; -1 means no
	// limit.
	ViewStateLimit int

	// NearcoreNext serves every answer, and writes genesis.json, as a
	// newer nearcore would: members and variants Nearline does not model
	// are added to accounts, access keys, chunk headers, transactions,
	// execution outcomes, action receipts and Transfer actions (see
	// nearcoreNext). It changes how the chain is served, not the chain.
	// Default false.
	NearcoreNext bool

	// Faults configures fault injection in Handler. Default: no faults.
	Faults FaultConfig

	// Runtime, when set, is the contract runtime the node runs contracts
	// with; the node does not close it. Nodes sharing one share its compile
	// cache (tests start many nodes). Default: the node starts its own.
	Runtime *nearvm.Runtime
}

// FaultConfig configures the fault-injection middleware. Every fraction is
// drawn from a random stream of its own, seeded by Seed, so faults never
// change the chain.
type FaultConfig struct {
	// Seed seeds the fault stream. Default 0.
	Seed uint64
	// Latency is added to every response. Default 0.
	Latency time.Duration
	// LatencyJitter adds a uniform random 0..LatencyJitter on top. Default 0.
	LatencyJitter time.Duration
	// Fail5xx is the fraction of requests answered with HTTP 500/502/503.
	Fail5xx float64
	// FailInternal is the fraction answered with a JSON-RPC INTERNAL_ERROR.
	FailInternal float64
	// FailMalformed is the fraction answered with a body that is not JSON.
	FailMalformed float64
	// FailTruncated is the fraction answered with the real body cut short.
	FailTruncated float64
	// Stall is the fraction of requests held without an answer until
	// StallDuration passes or the client goes away.
	Stall float64
	// StallDuration bounds a stall. Default DefaultStallDuration.
	StallDuration time.Duration
	// RateLimit, when positive, answers HTTP 429 past this many requests
	// per second (token bucket, burst of one second). Default 0 (off).
	RateLimit float64
}

// DefaultConfig returns the configuration `nearline sim` starts from: four
// shards, a few skipped heights and missing chunks, four transactions per
// block, one block per second.
func DefaultConfig() Config {
	return Config{
		Shards:           DefaultShards,
		EpochLength:      DefaultEpochLength,
		ProtocolVersion:  DefaultProtocolVersion,
		ChainID:          DefaultChainID,
		SkipRate:         0.05,
		MissingChunkRate: 0.05,
		TxsPerBlock:      4,
		BlockTime:        time.Second,
	}
}

// Defaults of Config and FaultConfig.
const (
	DefaultShards          = 4
	DefaultEpochLength     = 100
	DefaultProtocolVersion = 73
	DefaultChainID         = "nearline-sim"
	DefaultRPCAddr         = "0.0.0.0:3030"
	DefaultStallDuration   = 30 * time.Second
	// DefaultViewStateLimit is a regular nearcore node's view_state limit
	// (trie_viewer_state_size_limit), in bytes.
	DefaultViewStateLimit = 50_000
)

// DefaultGenesisTime is the genesis time of every chain that sets none.
var DefaultGenesisTime = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// DefaultYieldTimeout is nearcore's yield_timeout_length_in_blocks (mainnet).
const DefaultYieldTimeout = 200

func (c Config) withDefaults() Config {
	c.Shards = cmp.Or(c.Shards, DefaultShards)
	c.EpochLength = cmp.Or(c.EpochLength, DefaultEpochLength)
	c.ProtocolVersion = cmp.Or(c.ProtocolVersion, DefaultProtocolVersion)
	c.ChainID = cmp.Or(c.ChainID, DefaultChainID)
	if c.GenesisTime.IsZero() {
		c.GenesisTime = DefaultGenesisTime
	}
	c.YieldTimeout = cmp.Or(c.YieldTimeout, DefaultYieldTimeout)
	c.RPCAddr = cmp.Or(c.RPCAddr, DefaultRPCAddr)
	c.ViewStateLimit = cmp.Or(c.ViewStateLimit, DefaultViewStateLimit)
	c.Faults = c.Faults.withDefaults()
	return c
}

func (f FaultConfig) withDefaults() FaultConfig {
	f.StallDuration = cmp.Or(f.StallDuration, DefaultStallDuration)
	return f
}

func (c Config) validate() error {
	var errs []error
	check := func(bad bool, err error) {
		if bad {
			errs = append(errs, err)
		}
	}
	check(c.Shards < 1 || c.Shards > 16, fmt.Errorf("shards %d: want 1 to 16", c.Shards))
	errs = append(errs, bounds.AtLeast("epoch length", c.EpochLength, 2))
	check(c.TxsPerBlock < 0 || c.TxsPerBlock > 1000, fmt.Errorf("txs per block %d: want 0 to 1000", c.TxsPerBlock))
	check(c.SkipRate >= 1, errors.New("skip rate must be below 1"))
	check(c.BlockTime < 0, fmt.Errorf("block time %s: must not be negative", c.BlockTime))
	check(c.BlockTime == 0 && c.MaxHeight == 0, errors.New("block time 0 produces every block at once and needs a max height"))
	check(c.MaxHeight != 0 && c.MaxHeight < c.GenesisHeight, fmt.Errorf("max height %d is below the genesis height %d", c.MaxHeight, c.GenesisHeight))
	check(c.ForkAt != 0 && c.ForkAt <= c.GenesisHeight, fmt.Errorf("fork height %d must be above the genesis height %d", c.ForkAt, c.GenesisHeight))
	check(len(c.SplitShards) > len(c.ReshardAt), fmt.Errorf("split shards %v: more than the %d reshard heights", c.SplitShards, len(c.ReshardAt)))
	f := c.Faults
	for _, r := range []struct {
		name string
		v    float64
	}{{"skip rate", c.SkipRate}, {"missing chunk rate", c.MissingChunkRate}, {"fail-5xx", f.Fail5xx},
		{"deploy rate", c.DeployRate}, {"fail-internal", f.FailInternal}, {"fail-malformed", f.FailMalformed}, {"fail-truncated", f.FailTruncated}, {"stall", f.Stall}} {
		check(r.v < 0 || r.v > 1, fmt.Errorf("%s %v: want a fraction from 0 to 1", r.name, r.v))
	}
	check(f.Fail5xx+f.FailInternal+f.FailMalformed+f.FailTruncated+f.Stall > 1, errors.New("fault fractions add up to more than 1"))
	errs = append(errs,
		bounds.NotNegative("fault latency", f.Latency),
		bounds.NotNegative("fault latency jitter", f.LatencyJitter),
		bounds.NotNegative("stall duration", f.StallDuration),
		bounds.NotNegative("rate limit", f.RateLimit),
	)
	return errors.Join(errs...)
}
