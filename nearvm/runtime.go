package nearvm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nearline/nearline/internal/retry"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
	"golang.org/x/sync/singleflight"

	"github.com/nearline/nearline/internal/logs"
)

// Runtime runs NEAR contracts. It is long-lived and safe for concurrent
// calls; each call gets its own module instance.
type Runtime struct {
	cfg    Config
	logger *slog.Logger
	wasm   wazero.Runtime
	cache  *moduleCache
	memory *memoryPool
	calls  chan struct{} // a slot per running call (Config.MaxConcurrentCalls)
	group  singleflight.Group
	// compiles counts contract compilations (tests check warm calls skip them).
	compiles atomic.Int64
	hostFn   map[string]funcType // the env functions this runtime provides
	// modCfg instantiates contracts: anonymous (so one compiled module can
	// have many instances), no start exports run, and a fixed random source
	// (wazero otherwise seeds a fake one per instance; contracts have no WASI
	// to read it anyway).
	modCfg wazero.ModuleConfig
}

// New builds a Runtime with cfg (zero fields take their defaults).
// logger receives compile events (nil: none).
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Runtime, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("validate config: %w", err)
	}
	features := api.CoreFeaturesV2.SetEnabled(api.CoreFeatureSIMD, false)
	// NewRuntimeConfig picks the compiler where wazero supports the platform
	// (amd64, arm64) and the interpreter elsewhere. CloseOnContextDone stays
	// off: it costs a call out of the compiled code at every loop iteration
	// (about 30 ns); the gas tick checks ctx instead (see gas.go).
	wcfg := wazero.NewRuntimeConfig().
		WithCoreFeatures(features).
		WithMemoryLimitPages(cfg.MemoryLimitPages)
	r := &Runtime{
		cfg:    cfg,
		logger: logs.OrDiscard(logger),
		wasm:   wazero.NewRuntimeWithConfig(ctx, wcfg),
		cache:  newModuleCache(cfg.CacheSize),
		memory: &memoryPool{},
		calls:  make(chan struct{}, cfg.MaxConcurrentCalls),
		hostFn: map[string]funcType{},
		modCfg: wazero.NewModuleConfig().WithName("").WithStartFunctions().WithRandSource(zeroReader{}),
	}
	if err := r.instantiateHost(ctx); err != nil {
		_ = r.wasm.Close(ctx)
		return nil, fmt.Errorf("instantiate host functions: %w", err)
	}
	return r, nil
}

// Close releases every compiled contract. Calls in flight fail.
func (r *Runtime) Close(ctx context.Context) error {
	if err := r.wasm.Close(ctx); err != nil {
		return fmt.Errorf("close wazero runtime: %w", err)
	}
	return nil
}

// Call runs method of the contract code (whose hash codeHash keys the compile
// cache; empty means hash the code) with the call context c over the state
// st (nil reads as empty state).
//
// A contract failure returns the Outcome so far (logs, gas) together with a
// *FunctionCallError. Any other error (storage failure, ctx cancelled,
// runtime closed) is returned with a nil Outcome and is not a
// *FunctionCallError.
func (r *Runtime) Call(ctx context.Context, code []byte, codeHash string, method string, c Context, st Storage) (*Outcome, error) {
	if codeHash == "" {
		sum := sha256.Sum256(code)
		codeHash = hex.EncodeToString(sum[:])
	}
	entry, err := r.contract(ctx, code, codeHash)
	if err != nil {
		return nil, err
	}
	defer r.cache.release(ctx, entry)

	out := &Outcome{ReturnedReceipt: -1, StorageUsage: c.StorageUsage}
	if entry.compileErr != nil {
		return out, entry.compileErr
	}
	if method == "" {
		return out, methodResolveError("MethodEmptyName")
	}
	sig, ok := entry.exports[method]
	if !ok {
		return out, methodResolveError("MethodNotFound")
	}
	if len(sig.params) != 0 || len(sig.results) != 0 {
		return out, methodResolveError("MethodInvalidSignature")
	}
	if entry.linkErr != nil {
		return out, entry.linkErr
	}
	select {
	case r.calls <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for a free call slot: %w", ctx.Err())
	}
	defer func() { <-r.calls }()
	return r.run(ctx, entry, method, c, st)
}

// contract returns the cache entry for codeHash, compiling code on a miss
// (one compile per hash at a time), with a reference the caller releases.
func (r *Runtime) contract(ctx context.Context, code []byte, key string) (*compiledContract, error) {
	var entry *compiledContract
	// A contract evicted between its compile and its use is compiled
	// again, at most three times in all.
	policy := retry.Policy{Attempts: 3, Retryable: func(err error) bool { return errors.Is(err, errEvicted) }}
	err := policy.Do(ctx, func(ctx context.Context) error {
		if entry = r.cache.acquire(key); entry != nil {
			return nil
		}
		v, err, _ := r.group.Do(key, func() (any, error) {
			return r.compile(ctx, code, key)
		})
		if err != nil {
			return err
		}
		if entry = r.cache.add(ctx, v.(*compiledContract)); entry == nil {
			return errEvicted
		}
		return nil
	})
	if errors.Is(err, errEvicted) {
		return nil, fmt.Errorf("compile contract %s: %w", key, errEvicted)
	}
	return entry, err
}

// errEvicted is a contract evicted from the cache while it compiled.
var errEvicted = errors.New("evicted while compiling")

func (r *Runtime) compile(ctx context.Context, code []byte, key string) (*compiledContract, error) {
	r.compiles.Add(1)
	start := time.Now()
	e := &compiledContract{key: key}
	p, err := prepareModule(code, r.cfg.MemoryLimitPages, wasmOpCost)
	switch {
	case errors.Is(err, errMemoryLimits):
		e.compileErr = prepareError("Memory", "Error creating memory.")
		return e, nil
	case err != nil:
		e.compileErr = prepareError("Deserialization", "Error happened while deserializing the module.")
		r.logger.Debug("contract rejected", "code_hash", key, "err", err)
		return e, nil
	}
	e.exports = p.exports
	e.linkErr = r.checkImports(p)
	compiled, err := r.wasm.CompileModule(ctx, p.binary)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("compile contract %s: %w", key, ctx.Err())
		}
		e.compileErr = compileError(err.Error())
		return e, nil
	}
	e.compiled = compiled
	r.logger.Debug("contract compiled", "code_hash", key, "code_bytes", len(code), "elapsed", time.Since(start))
	return e, nil
}

// checkImports finds the first import the runtime cannot satisfy, as
// nearcore's LinkError.
func (r *Runtime) checkImports(p *prepared) *FunctionCallError {
	for _, imp := range p.funcImports {
		want, ok := r.hostFn[imp.name]
		if imp.module != "env" || !ok {
			return linkError(fmt.Sprintf("Error while importing %q.%q: unknown import. Expected Function(%s)", imp.module, imp.name, imp.typ))
		}
		if !want.equal(imp.typ) {
			return linkError(fmt.Sprintf("Error while importing %q.%q: incompatible import type. Expected Function(%s) but received Function(%s)", imp.module, imp.name, imp.typ, want))
		}
	}
	if len(p.otherImports) > 0 {
		return linkError(p.otherImports[0])
	}
	return nil
}

type stateKey struct{}

func (r *Runtime) run(ctx context.Context, e *compiledContract, method string, c Context, st Storage) (*Outcome, error) {
	s := newCallState(r.cfg, c, st)
	callCtx := experimental.WithMemoryAllocator(context.WithValue(ctx, stateKey{}, s), r.memory)
	mod, err := r.wasm.InstantiateModule(callCtx, e.compiled, r.modCfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("instantiate contract: %w", ctx.Err())
		}
		// A start function that failed, or data that does not fit memory.
		return s.outcome(), prepareError("Instantiate", "Error happened during instantiation.")
	}
	defer func() { _ = mod.Close(context.WithoutCancel(ctx)) }()
	if s.gas == nil && !s.bindGas(mod) {
		return nil, errors.New("instrumented contract lacks its gas global")
	}
	_, callErr := mod.ExportedFunction(method).Call(callCtx)
	out := s.outcome()
	if callErr == nil {
		if s.gasBurnt() > s.gasLimit { // overspent after the last check
			out.clearEffects(c.StorageUsage)
			return out, s.gasError()
		}
		return out, nil
	}
	out.clearEffects(c.StorageUsage)
	switch {
	case s.cancelled:
		return nil, fmt.Errorf("call %s: %w", method, context.Cause(ctx))
	case s.internalErr != nil:
		return nil, s.internalErr
	case s.hostErr != nil:
		return out, s.hostErr
	}
	var exit *sys.ExitError
	if errors.As(callErr, &exit) {
		return nil, fmt.Errorf("call %s: module closed: %w", method, callErr)
	}
	return out, trapFromError(callErr)
}

// trapFromError maps a wazero runtime error to nearcore's WasmTrap. wazero
// exports no sentinel for its traps, so its fixed messages are matched.
func trapFromError(err error) *FunctionCallError {
	msg := strings.TrimPrefix(err.Error(), "wasm error: ")
	for _, t := range []struct{ text, variant string }{
		{"unreachable", "Unreachable"},
		{"out of bounds memory access", "MemoryOutOfBounds"},
		{"integer divide by zero", "IllegalArithmetic"},
		{"integer overflow", "IllegalArithmetic"},
		{"invalid conversion to integer", "IllegalArithmetic"},
		{"invalid table access", "CallIndirectOOB"},
		{"indirect call type mismatch", "IncorrectCallIndirectSignature"},
		{"stack overflow", "StackOverflow"},
		{"unaligned atomic", "MisalignedAtomicAccess"},
		{"null reference", "IndirectCallToNull"},
	} {
		if strings.HasPrefix(msg, t.text) {
			return wasmTrap(t.variant)
		}
	}
	return wasmTrap("GenericTrap")
}

// zeroReader is the random source of contract instances.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func (o *Outcome) clearEffects(storageUsage uint64) {
	o.StorageUsage = storageUsage
	o.ReturnData = nil
	o.Writes = nil
	o.Receipts = nil
	o.ReturnedReceipt = -1
}
