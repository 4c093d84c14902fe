package nearvm

import (
	"context"
	"math"

	"github.com/tetratelabs/wazero/api"
)

// Gas accounting. The instrumented contract (see remap.go) subtracts the
// cost of its instructions from an i64 global, the current slice, and calls
// the tick host function at a function entry or loop header once the slice
// is negative. The tick moves up to gasSlice more gas from the call's budget
// into the slice, or fails the call when the budget is spent. It is also
// where a call notices ctx cancellation and where the Go scheduler can
// preempt the goroutine (compiled wasm has no preemption points of its own),
// so a slice is small: 1 Tgas is about a million wasm instructions, a
// millisecond or two.
const gasSlice int64 = 1_000_000_000_000

// bindGas finds the gas global of the module instance.
func (s *callState) bindGas(m api.Module) bool {
	g, ok := m.ExportedGlobal(gasGlobalExport).(api.MutableGlobal)
	if ok {
		s.gas = g
	}
	return ok
}

// gasBurnt is the gas moved into the slice less what is left of it (a
// negative slice is gas spent beyond it).
func (s *callState) gasBurnt() int64 {
	if s.gas == nil {
		return 0
	}
	return s.gasLimit - s.budget - int64(s.gas.Get())
}

// outOfGas burns everything and fails the call.
func (s *callState) outOfGas() {
	s.budget = 0
	s.gas.Set(math.MaxUint64) // -1: one more than the limit burnt
	s.fail(s.gasError())
}

// charge burns gas for a host function, refilling the slice from the budget
// when it is short.
func (s *callState) charge(cost uint64) {
	slice := int64(s.gas.Get())
	if slice >= 0 && uint64(slice) >= cost {
		s.gas.Set(uint64(slice - int64(cost)))
		return
	}
	if cost > uint64(s.gasLimit) {
		s.outOfGas()
	}
	need := int64(cost) - slice
	if need > s.budget {
		s.outOfGas()
	}
	s.budget -= need
	s.gas.Set(0)
}

// hostTick refills the slice, or fails the call when the budget is spent or
// ctx is done.
func hostTick(ctx context.Context, s *callState, _ []uint64) {
	if err := ctx.Err(); err != nil {
		s.cancelled = true
		s.failInternal(err)
	}
	available := s.budget + int64(s.gas.Get())
	if available <= 0 {
		s.outOfGas()
	}
	move := min(gasSlice, available)
	s.gas.Set(uint64(move))
	s.budget = available - move
}
