package nearvm

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
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
	// Logger receives compile events. Default: discard.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.MaxGas == 0 {
		c.MaxGas = DefaultMaxGas
	}
	if c.CacheSize == 0 {
		c.CacheSize = DefaultCacheSize
	}
	if c.MemoryLimitPages == 0 {
		c.MemoryLimitPages = DefaultMemoryLimitPages
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c Config) validate() error {
	if c.MaxGas > math.MaxInt64 {
		return fmt.Errorf("max gas %d exceeds %d", c.MaxGas, int64(math.MaxInt64))
	}
	if c.CacheSize < 0 {
		return errors.New("cache size must not be negative")
	}
	if c.MemoryLimitPages > 65536 {
		return fmt.Errorf("memory limit %d pages exceeds the wasm maximum of 65536", c.MemoryLimitPages)
	}
	return nil
}
