package nearvm

import (
	"context"
	"fmt"
	"math"

	"github.com/tetratelabs/wazero/api"
)

// envDefs are the register, context, economics and miscellaneous host
// functions.
func envDefs() []hostDef {
	return []hostDef{
		// Registers.
		{"read_register", 2, 0, func(_ context.Context, s *callState, st []uint64) {
			data, ok := s.registers[st[0]]
			if !ok {
				s.fail(errInvalidRegisterID(st[0]))
			}
			s.memWrite(st[1], data)
		}},
		{"register_len", 1, 1, func(_ context.Context, s *callState, st []uint64) {
			data, ok := s.registers[st[0]]
			if !ok {
				st[0] = math.MaxUint64
				return
			}
			st[0] = uint64(len(data))
		}},
		{"write_register", 3, 0, func(_ context.Context, s *callState, st []uint64) {
			s.setRegister(st[0], s.memRead(st[2], st[1]))
		}},

		// Context.
		{"current_account_id", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.setRegister(st[0], []byte(s.c.CurrentAccountID))
		}},
		{"signer_account_id", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("signer_account_id")
			s.setRegister(st[0], []byte(s.c.SignerAccountID))
		}},
		{"signer_account_pk", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("signer_account_pk")
			s.setRegister(st[0], append([]byte(nil), s.c.SignerAccountPK...))
		}},
		{"predecessor_account_id", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("predecessor_account_id")
			s.setRegister(st[0], []byte(s.c.PredecessorAccountID))
		}},
		{"input", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			// Registers are only ever read, so the register shares the
			// call's input (capped, so no append can reach it) instead of
			// a copy of up to a body's size per call of input().
			s.setRegister(st[0], s.c.Input[:len(s.c.Input):len(s.c.Input)])
		}},
		{"block_index", 0, 1, func(_ context.Context, s *callState, st []uint64) { st[0] = s.c.BlockHeight }},
		{"block_timestamp", 0, 1, func(_ context.Context, s *callState, st []uint64) { st[0] = s.c.BlockTimestamp }},
		{"epoch_height", 0, 1, func(_ context.Context, s *callState, st []uint64) { st[0] = s.c.EpochHeight }},
		{"storage_usage", 0, 1, func(_ context.Context, s *callState, st []uint64) { st[0] = s.storageUsage }},

		// Economics.
		{"account_balance", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.writeU128(st[0], s.c.AccountBalance)
		}},
		{"account_locked_balance", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.writeU128(st[0], s.c.AccountLockedBalance)
		}},
		{"attached_deposit", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.writeU128(st[0], s.c.AttachedDeposit)
		}},
		{"prepaid_gas", 0, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("prepaid_gas")
			st[0] = uint64(s.gasLimit)
		}},
		{"used_gas", 0, 1, func(_ context.Context, s *callState, st []uint64) {
			s.prohibitedInView("used_gas")
			st[0] = uint64(s.gasLimit - int64(s.gas.Get()))
		}},
		{"random_seed", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.setRegister(st[0], append([]byte(nil), s.c.RandomSeed...))
		}},

		// Miscellaneous.
		{"value_return", 2, 0, func(_ context.Context, s *callState, st []uint64) {
			if st[0] != math.MaxUint64 && st[0] > maxLengthReturnedData {
				s.fail(errLimit("ReturnedValueLengthExceeded", "a returned value", st[0], maxLengthReturnedData))
			}
			data := s.memOrRegister(st[1], st[0])
			if len(data) > maxLengthReturnedData {
				s.fail(errLimit("ReturnedValueLengthExceeded", "a returned value", uint64(len(data)), maxLengthReturnedData))
			}
			s.returnData = append([]byte(nil), data...)
		}},
		{"panic", 0, 0, func(_ context.Context, s *callState, _ []uint64) {
			s.fail(errGuestPanic("explicit guest panic"))
		}},
		{"panic_utf8", 2, 0, func(_ context.Context, s *callState, st []uint64) {
			s.fail(errGuestPanic(s.utf8String(st[0], st[1])))
		}},
		{"log_utf8", 2, 0, func(_ context.Context, s *callState, st []uint64) {
			s.addLog(s.utf8String(st[0], st[1]))
		}},
		{"log_utf16", 2, 0, func(_ context.Context, s *callState, st []uint64) {
			s.addLog(s.utf16String(st[0], st[1]))
		}},
		{"abort", 4, 0, hostAbort},
		// gas is the counter older nearcore instrumentation called; Nearline
		// meters on its own, so a contract calling it is only charged.
		{"gas", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.charge(uint64(api.DecodeU32(st[0])) * wasmOpCost)
		}},

		// Validators.
		{"validator_stake", 3, 0, func(_ context.Context, s *callState, st []uint64) {
			s.charge(costValidatorBase)
			account := string(s.memRead(st[1], st[0]))
			s.writeU128(st[2], s.c.Validators[account])
		}},
		{"validator_total_stake", 1, 0, func(_ context.Context, s *callState, st []uint64) {
			s.charge(costValidatorBase)
			total := U128{}
			for _, v := range s.c.Validators {
				lo := total.Lo + v.Lo
				carry := uint64(0)
				if lo < total.Lo {
					carry = 1
				}
				total = U128{Hi: total.Hi + v.Hi + carry, Lo: lo}
			}
			s.writeU128(st[0], total)
		}},
	}
}

// hostAbort is AssemblyScript's abort: its strings are UTF-16 with the byte
// length stored in the four bytes before the pointer.
func hostAbort(_ context.Context, s *callState, st []uint64) {
	msgPtr, filePtr := uint64(api.DecodeU32(st[0])), uint64(api.DecodeU32(st[1]))
	line, col := api.DecodeU32(st[2]), api.DecodeU32(st[3])
	msg := s.asString(msgPtr)
	file := s.asString(filePtr)
	s.fail(errGuestPanic(fmt.Sprintf("%s, filename: \"%s\" line: %d col: %d", msg, file, line, col)))
}

func (s *callState) asString(ptr uint64) string {
	if ptr < 4 {
		s.fail(errBadUTF16())
	}
	lenBytes := s.memRead(ptr-4, 4)
	n := uint64(lenBytes[0]) | uint64(lenBytes[1])<<8 | uint64(lenBytes[2])<<16 | uint64(lenBytes[3])<<24
	return s.utf16String(n, ptr)
}
