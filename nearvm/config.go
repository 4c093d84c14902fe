package nearvm

import (
	"cmp"
	"errors"
	"math"

	"github.com/nearline/nearline/internal/bounds"
)

// Defaults of Config.
const (
	// DefaultMaxGas is nearcore's max_gas_burnt_view: 300 Tgas.
	DefaultMaxGas uint64 = 300_000_000_000_000
	// DefaultCacheSize is the number of compiled contracts kept.
	DefaultCacheSize = 64
	// DefaultMemoryLimitPages is nearcore's max_memory_pages (64 KiB pages,
	// 128 MiB in all).
	DefaultMemoryLimitPages uint32 = 2048
	// DefaultMaxConcurrentCalls is how many calls run at once by default.
	DefaultMaxConcurrentCalls = 4
	// wasmOpCost is nearcore's regular_op_cost: the gas of one wasm instruction.
	wasmOpCost uint64 = 822_756
)

// Config configures a Runtime. The zero value is usable: every field has a
// default, filled by withDefaults.
type Config struct {
	// MaxGas is the most gas one call may burn; a call that needs more fails
	// with GasLimitExceeded. Default DefaultMaxGas (300 Tgas).
	MaxGas uint64
	// CacheSize is how many compiled contracts (by code hash) the runtime
	// keeps, least recently used evicted first. Default DefaultCacheSize (64).
	CacheSize int
	// MemoryLimitPages caps a contract's linear memory, in 64 KiB pages.
	// Default DefaultMemoryLimitPages (2048 = 128 MiB).
	MemoryLimitPages uint32
	// MaxConcurrentCalls caps the calls running at once; a call beyond it
	// waits for one to finish (or for its ctx). The contracts' memories
	// are thus at most MaxConcurrentCalls × MemoryLimitPages pages, beside
	// a pool of idle ones of at most 32 MiB. Default
	// DefaultMaxConcurrentCalls (4).
	MaxConcurrentCalls int
}

func (c Config) withDefaults() Config {
	c.MaxGas = cmp.Or(c.MaxGas, DefaultMaxGas)
	c.CacheSize = cmp.Or(c.CacheSize, DefaultCacheSize)
	c.MemoryLimitPages = cmp.Or(c.MemoryLimitPages, DefaultMemoryLimitPages)
	c.MaxConcurrentCalls = cmp.Or(c.MaxConcurrentCalls, DefaultMaxConcurrentCalls)
	return c
}

func (c Config) validate() error {
	return errors.Join(
		bounds.AtMost("max gas", c.MaxGas, math.MaxInt64),
		bounds.NotNegative("cache size", c.CacheSize),
		bounds.AtMost("memory limit pages", c.MemoryLimitPages, 65536),
		bounds.NotNegative("max concurrent calls", c.MaxConcurrentCalls),
	)
}
