package nearvm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// Limits nearcore's limit_config imposes on host functions.
const (
	maxRegisterSize       = 100 << 20
	maxNumberRegisters    = 100
	registersMemoryLimit  = 1 << 30
	maxNumberLogs         = 100
	maxTotalLogLength     = 16 << 10
	maxLengthStorageKey   = 2 << 10
	maxLengthStorageValue = 4 << 20
	maxLengthReturnedData = 4 << 20
	maxPromisesPerCall    = 1024 // generous; nearcore bounds promises by gas
	storageRecordOverhead = 40   // storage_num_extra_bytes_record
)

// Host function gas, close to nearcore's ext costs (exact figures are not
// the goal; burning gas proportionally to the work done is).
const (
	costBase          = 264_768_111
	costMemBase       = 2_609_863_200
	costMemByte       = 3_801_333
	costRegisterBase  = 2_517_165_186
	costRegisterByte  = 98_562
	costUTF8Byte      = 291_580_479
	costUTF16Byte     = 163_577_493
	costLogByte       = 13_198_791
	costHashBase      = 5_000_000_000
	costHashByte      = 30_000_000
	costEcrecover     = 278_821_988_457
	costEd25519Base   = 210_000_000_000
	costEd25519Byte   = 9_000_000
	costStorageBase   = 56_356_845_750
	costStorageByte   = 70_482_867
	costPromiseBase   = 1_465_013_400
	costValidatorBase = 911_834_726_400
)

// callState is everything one call's host functions share. A host function
// that fails records the error in hostErr (or internalErr for a Storage
// failure) and panics with it; wazero recovers the panic and returns it from
// the guest call, and Runtime.run reports the recorded error.
type callState struct {
	c        Context
	st       Storage
	mod      api.Module
	gas      api.MutableGlobal // the current gas slice; see gas.go
	gasLimit int64
	budget   int64 // gas not yet moved into the slice
	// limitIsMax tells GasLimitExceeded (the runtime's cap) from GasExceeded
	// (the call's smaller prepaid gas).
	limitIsMax bool
	cancelled  bool

	registers     map[uint64][]byte
	registersSize uint64
	reads         map[string]cachedRead // Storage answers, per call
	overlay       map[string]cachedRead // this call's own writes
	writes        []Write
	storageUsage  uint64

	logs       []string
	logBytes   uint64
	returnData []byte

	promises        []promise
	receipts        []PromiseReceipt
	returnedReceipt int
	yields          int // promise_yield_create calls so far
	resumes         []Resume

	hostErr     *FunctionCallError
	internalErr error
}

type cachedRead struct {
	value []byte
	found bool
}

func newCallState(cfg Config, c Context, st Storage) *callState {
	prepaid := c.PrepaidGas
	if prepaid == 0 || prepaid > cfg.MaxGas {
		prepaid = cfg.MaxGas
	}
	return &callState{
		c: c, st: st,
		gasLimit:        int64(prepaid),
		budget:          int64(prepaid),
		limitIsMax:      prepaid >= cfg.MaxGas,
		registers:       map[uint64][]byte{},
		reads:           map[string]cachedRead{},
		overlay:         map[string]cachedRead{},
		storageUsage:    c.StorageUsage,
		returnedReceipt: -1,
	}
}

func (s *callState) outcome() *Outcome {
	return &Outcome{
		ReturnData:      s.returnData,
		Logs:            s.logs,
		GasUsed:         uint64(min(s.gasBurnt(), s.gasLimit)),
		Writes:          s.writes,
		Receipts:        s.receipts,
		ReturnedReceipt: s.returnedReceipt,
		Resumes:         s.resumes,
		StorageUsage:    s.storageUsage,
	}
}

func (s *callState) gasError() *FunctionCallError {
	if s.limitIsMax {
		return errGasLimitExceeded()
	}
	return errGasExceeded()
}

// fail aborts the guest call with a contract error.
func (s *callState) fail(err *FunctionCallError) {
	s.hostErr = err
	panic(err)
}

// failInternal aborts the guest call with a Nearline-side error.
func (s *callState) failInternal(err error) {
	s.internalErr = err
	panic(err)
}

func (s *callState) chargeBytes(base, perByte, n uint64) {
	if n > math.MaxUint64/perByte {
		s.charge(math.MaxUint64)
	}
	s.charge(base + perByte*n)
}

func (s *callState) prohibitedInView(fn string) {
	if s.c.View {
		s.fail(errProhibitedInView(fn))
	}
}

// memView returns guest memory [ptr, ptr+n) without copying.
func (s *callState) memView(ptr, n uint64) []byte {
	if ptr > math.MaxUint32 || n > math.MaxUint32 {
		s.fail(errMemoryAccessViolation())
	}
	b, ok := s.mod.Memory().Read(uint32(ptr), uint32(n))
	if !ok {
		s.fail(errMemoryAccessViolation())
	}
	return b
}

// memRead copies guest memory [ptr, ptr+n), charging for it.
func (s *callState) memRead(ptr, n uint64) []byte {
	s.chargeBytes(costMemBase, costMemByte, n)
	return append([]byte(nil), s.memView(ptr, n)...)
}

func (s *callState) memWrite(ptr uint64, data []byte) {
	s.chargeBytes(costMemBase, costMemByte, uint64(len(data)))
	if ptr > math.MaxUint32 || !s.mod.Memory().Write(uint32(ptr), data) {
		s.fail(errMemoryAccessViolation())
	}
}

func (s *callState) readU128(ptr uint64) U128 {
	return u128FromLittleEndian(s.memRead(ptr, 16))
}

func (s *callState) writeU128(ptr uint64, v U128) {
	s.memWrite(ptr, v.littleEndian())
}

func (s *callState) setRegister(id uint64, data []byte) {
	s.chargeBytes(costRegisterBase, costRegisterByte, uint64(len(data)))
	old, exists := s.registers[id]
	if uint64(len(data)) > maxRegisterSize || (!exists && len(s.registers) >= maxNumberRegisters) {
		s.fail(errMemoryAccessViolation())
	}
	size := s.registersSize - uint64(len(old)) + uint64(len(data))
	if size > registersMemoryLimit {
		s.fail(errMemoryAccessViolation())
	}
	s.registersSize = size
	s.registers[id] = data
}

// stringArg reads the bytes of a string argument: len bytes at ptr, or,
// when len is u64::MAX, the characters of unit bytes (1 for UTF-8, 2 for
// UTF-16) up to the first all-zero one.
func (s *callState) stringArg(length, ptr, unit uint64) []byte {
	if length != math.MaxUint64 {
		if length > maxTotalLogLength {
			s.fail(errLimit("TotalLogLengthExceeded", "a log message", length, maxTotalLogLength))
		}
		return s.memRead(ptr, length)
	}
	for i := uint64(0); ; i += unit {
		if i > maxTotalLogLength {
			s.fail(errLimit("TotalLogLengthExceeded", "a log message", i, maxTotalLogLength))
		}
		if slices.Max(s.memView(ptr+i, unit)) == 0 {
			return s.memRead(ptr, i)
		}
	}
}

// utf8String reads a UTF-8 string argument (see stringArg).
func (s *callState) utf8String(length, ptr uint64) string {
	b := s.stringArg(length, ptr, 1)
	s.chargeBytes(costBase, costUTF8Byte, uint64(len(b)))
	if !utf8.Valid(b) {
		s.fail(errBadUTF8())
	}
	return string(b)
}

// utf16String reads a UTF-16LE string argument (see stringArg).
func (s *callState) utf16String(length, ptr uint64) string {
	b := s.stringArg(length, ptr, 2)
	s.chargeBytes(costBase, costUTF16Byte, uint64(len(b)))
	if len(b)%2 != 0 {
		s.fail(errBadUTF16())
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		units[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	for i := 0; i < len(units); i++ {
		switch u := units[i]; {
		case u >= 0xd800 && u < 0xdc00:
			if i+1 >= len(units) || units[i+1] < 0xdc00 || units[i+1] >= 0xe000 {
				s.fail(errBadUTF16())
			}
			i++
		case u >= 0xdc00 && u < 0xe000:
			s.fail(errBadUTF16())
		}
	}
	return string(utf16.Decode(units))
}

func (s *callState) addLog(msg string) {
	if len(s.logs) >= maxNumberLogs {
		s.fail(errNumberOfLogsExceeded(maxNumberLogs))
	}
	total := s.logBytes + uint64(len(msg))
	if total > maxTotalLogLength {
		s.fail(errLimit("TotalLogLengthExceeded", "a log message", total, maxTotalLogLength))
	}
	s.chargeBytes(costBase, costLogByte, uint64(len(msg)))
	s.logBytes = total
	s.logs = append(s.logs, msg)
}

// hostFunc is a host function body: it reads its parameters from stack and
// writes its results back to stack[0].
type hostFunc func(ctx context.Context, s *callState, stack []uint64)

type hostDef struct {
	name    string
	params  int // number of i64 parameters (abort alone takes i32s)
	results int // 0 or 1 i64 result (promise_yield_resume's is a u32)
	fn      hostFunc
}

var errNoCallState = errors.New("host function called outside a nearvm call")

// instantiateHost registers module env with every host function.
func (r *Runtime) instantiateHost(ctx context.Context) error {
	b := r.wasm.NewHostModuleBuilder("env")
	for _, d := range hostDefs() {
		params := make([]api.ValueType, d.params)
		for i := range params {
			params[i] = api.ValueTypeI64
		}
		if d.name == "abort" || d.name == "gas" {
			for i := range params {
				params[i] = api.ValueTypeI32
			}
		}
		results := make([]api.ValueType, d.results)
		for i := range results {
			results[i] = api.ValueTypeI64
			if d.name == "promise_yield_resume" {
				results[i] = api.ValueTypeI32
			}
		}
		ft := funcType{params: make([]byte, len(params)), results: make([]byte, len(results))}
		for i, p := range params {
			ft.params[i] = p
		}
		for i, p := range results {
			ft.results[i] = p
		}
		if d.name != tickImport { // contracts may not import it themselves
			r.hostFn[d.name] = ft
		}
		fn := d.fn
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
				s, ok := ctx.Value(stateKey{}).(*callState)
				if !ok {
					panic(errNoCallState)
				}
				s.mod = m
				if s.gas == nil { // a start function runs before Call binds the global
					s.bindGas(m)
				}
				s.charge(costBase)
				fn(ctx, s, stack)
			}), params, results).
			Export(d.name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("instantiate env: %w", err)
	}
	return nil
}

func hostDefs() []hostDef {
	var defs []hostDef
	defs = append(defs, envDefs()...)
	defs = append(defs, storageDefs()...)
	defs = append(defs, cryptoDefs()...)
	defs = append(defs, promiseDefs()...)
	defs = append(defs, yieldDefs()...)
	defs = append(defs, hostDef{tickImport, 0, 0, hostTick})
	return defs
}

func boolU64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
