package nearvm

import (
	"errors"
	"fmt"

	"github.com/nearline/nearline/nearvm/internal/wasmenc"
)

// This file holds the low-level WebAssembly binary reading and writing used by
// the instrumenter (instrument.go): LEB128 numbers, names, limits and the
// length of every instruction the runtime accepts.

var errTruncated = errors.New("unexpected end of wasm binary")

// reader walks a byte slice; every method fails with errTruncated rather than
// panicking on short input.
type reader struct {
	buf []byte
	pos int
}

func (r *reader) eof() bool { return r.pos >= len(r.buf) }

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, errTruncated
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || r.pos+n > len(r.buf) || r.pos+n < r.pos {
		return nil, errTruncated
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// u32 reads an unsigned LEB128 number of at most 32 bits.
func (r *reader) u32() (uint32, error) {
	var result uint64
	for shift := uint(0); shift < 35; shift += 7 {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		result |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			if result > 0xffffffff {
				return 0, errors.New("u32 out of range")
			}
			return uint32(result), nil
		}
	}
	return 0, errors.New("u32 LEB128 too long")
}

// skipLEB skips a signed or unsigned LEB128 number of at most maxBytes bytes.
func (r *reader) skipLEB(maxBytes int) error {
	for i := 0; i < maxBytes; i++ {
		b, err := r.byte()
		if err != nil {
			return err
		}
		if b&0x80 == 0 {
			return nil
		}
	}
	return errors.New("LEB128 too long")
}

// sized reads a byte string prefixed with its length (a name, a section or
// function body, a vector of value types).
func (r *reader) sized() ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	return r.bytes(int(n))
}

func (r *reader) name() (string, error) {
	b, err := r.sized()
	return string(b), err
}

// limits reads memory or table limits.
func (r *reader) limits() (minPages uint32, maxPages uint32, hasMax bool, err error) {
	flag, err := r.byte()
	if err != nil {
		return 0, 0, false, err
	}
	switch flag {
	case 0x00, 0x01:
	default:
		return 0, 0, false, fmt.Errorf("unsupported limits flag %#x", flag)
	}
	if minPages, err = r.u32(); err != nil {
		return 0, 0, false, err
	}
	if flag == 0x01 {
		if maxPages, err = r.u32(); err != nil {
			return 0, 0, false, err
		}
		hasMax = true
	}
	return minPages, maxPages, hasMax, nil
}

func appendLimits(b []byte, minPages, maxPages uint32) []byte {
	b = append(b, 0x01)
	b = wasmenc.AppendU32(b, minPages)
	return wasmenc.AppendU32(b, maxPages)
}

// Value type bytes as the binary format spells them.
const (
	valI32     = 0x7f
	valI64     = 0x7e
	valF32     = 0x7d
	valF64     = 0x7c
	valV128    = 0x7b
	valFuncRef = 0x70
	valExtern  = 0x6f
)

func valTypeName(b byte) string {
	switch b {
	case valI32:
		return "I32"
	case valI64:
		return "I64"
	case valF32:
		return "F32"
	case valF64:
		return "F64"
	case valV128:
		return "V128"
	case valFuncRef:
		return "FuncRef"
	case valExtern:
		return "ExternRef"
	}
	return fmt.Sprintf("Unknown(%#x)", b)
}

// endsSegment reports whether an instruction closes a straight-line run of
// code for gas metering: after it, control may continue somewhere else.
func endsSegment(op byte) bool {
	switch op {
	case 0x00, 0x02, 0x03, 0x04, 0x05, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f:
		return true
	}
	return false
}

// skipInstruction consumes one instruction (opcode already read) and its
// immediates. It accepts MVP, sign-extension, saturating conversions, bulk
// memory, multi-value block types and the reference-types instructions;
// anything else (SIMD, threads, exceptions, tail calls) is rejected.
func skipInstruction(r *reader, op byte) error {
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0b || op == 0x0f ||
		op == 0x1a || op == 0x1b || op == 0xd1:
		return nil
	case op >= 0x45 && op <= 0xc4:
		return nil
	case op >= 0x02 && op <= 0x04:
		return skipBlockType(r)
	case op == 0x0c || op == 0x0d || op == 0x10 || (op >= 0x20 && op <= 0x26) || op == 0xd2:
		return r.skipLEB(5)
	case op == 0x0e:
		n, err := r.u32()
		if err != nil {
			return err
		}
		for i := uint64(0); i <= uint64(n); i++ {
			if err := r.skipLEB(5); err != nil {
				return err
			}
		}
		return nil
	case op == 0x11:
		if err := r.skipLEB(5); err != nil {
			return err
		}
		return r.skipLEB(5)
	case op == 0x1c:
		_, err := r.sized()
		return err
	case op >= 0x28 && op <= 0x3e:
		if err := r.skipLEB(5); err != nil {
			return err
		}
		return r.skipLEB(5)
	case op == 0x3f || op == 0x40:
		return r.skipLEB(5)
	case op == 0x41:
		return r.skipLEB(5)
	case op == 0x42:
		return r.skipLEB(10)
	case op == 0x43:
		_, err := r.bytes(4)
		return err
	case op == 0x44:
		_, err := r.bytes(8)
		return err
	case op == 0xd0:
		_, err := r.byte()
		return err
	case op == 0xfc:
		return skipPrefixedFC(r)
	}
	return fmt.Errorf("unsupported opcode %#x", op)
}

func skipBlockType(r *reader) error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	switch b {
	case 0x40, valI32, valI64, valF32, valF64, valV128, valFuncRef, valExtern:
		return nil
	}
	// A type index, encoded as a signed 33-bit LEB128 whose first byte was b.
	if b&0x80 == 0 {
		return nil
	}
	return r.skipLEB(4)
}

func skipPrefixedFC(r *reader) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 7: // saturating float to int
		return nil
	case sub == 8: // memory.init
		if err := r.skipLEB(5); err != nil {
			return err
		}
		return r.skipLEB(5)
	case sub == 9 || sub == 13 || sub == 15 || sub == 16 || sub == 17:
		return r.skipLEB(5)
	case sub == 10 || sub == 12 || sub == 14: // memory.copy, table.init, table.copy
		if err := r.skipLEB(5); err != nil {
			return err
		}
		return r.skipLEB(5)
	case sub == 11: // memory.fill
		return r.skipLEB(5)
	}
	return fmt.Errorf("unsupported opcode 0xfc %d", sub)
}
