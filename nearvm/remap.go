package nearvm

import (
	"errors"
	"fmt"

	"github.com/nearline/nearline/nearvm/internal/wasmenc"
)

// remapper renumbers functions after the tick import was appended to the
// function imports: defined functions move up by one, and the tick function
// takes index `imported`.
type remapper struct {
	imported uint32 // function imports before the tick import
}

func (m remapper) fn(idx uint32) uint32 {
	if idx >= m.imported {
		return idx + 1
	}
	return idx
}

func (m remapper) tick() uint32 { return m.imported }

// constExpr copies a constant expression up to and including its end,
// renumbering ref.func.
func (m remapper) constExpr(r *reader, out []byte) ([]byte, error) {
	for {
		start := r.pos
		op, err := r.byte()
		if err != nil {
			return nil, err
		}
		switch op {
		case 0x0b:
			return append(out, op), nil
		case 0xd2:
			idx, err := r.u32()
			if err != nil {
				return nil, err
			}
			out = wasmenc.AppendU32(append(out, op), m.fn(idx))
			continue
		case 0x41, 0x42, 0x43, 0x44, 0x23, 0xd0,
			0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // consts, global.get, ref.null, extended-const arithmetic
			if err := skipInstruction(r, op); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unsupported opcode %#x in constant expression", op)
		}
		out = append(out, r.buf[start:r.pos]...)
	}
}

func (m remapper) globals(r *reader) ([]byte, error) {
	return vec(r, nil, func(_ uint32, out []byte) ([]byte, error) {
		typ, err := r.bytes(2)
		if err != nil {
			return nil, err
		}
		return m.constExpr(r, append(out, typ...))
	})
}

// elements rewrites the element section in all eight encodings.
func (m remapper) elements(r *reader) ([]byte, error) {
	return vec(r, nil, func(_ uint32, out []byte) ([]byte, error) {
		flags, err := r.u32()
		if err != nil {
			return nil, err
		}
		if flags > 7 {
			return nil, fmt.Errorf("unknown element segment flags %d", flags)
		}
		out = wasmenc.AppendU32(out, flags)
		if flags&0x02 != 0 && flags&0x01 == 0 { // explicit table index
			table, err := r.u32()
			if err != nil {
				return nil, err
			}
			out = wasmenc.AppendU32(out, table)
		}
		if flags&0x01 == 0 { // active: offset expression
			if out, err = m.constExpr(r, out); err != nil {
				return nil, err
			}
		}
		if flags&0x03 != 0 { // elemkind or reftype byte
			b, err := r.byte()
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		return vec(r, out, func(_ uint32, out []byte) ([]byte, error) {
			if flags&0x04 != 0 {
				return m.constExpr(r, out)
			}
			idx, err := r.u32()
			if err != nil {
				return nil, err
			}
			return wasmenc.AppendU32(out, m.fn(idx)), nil
		})
	})
}

// code instruments every function body: each straight-line run of
// instructions subtracts its cost from the gas global, and the function
// entry and every loop header call the tick function when the global is
// negative. Checking only there keeps the number of basic blocks, and so
// wazero's compile time, close to the original; any unbounded execution
// passes a loop header or a function entry.
func (m remapper) code(r *reader, gasIdx uint32, opCost uint64) ([]byte, error) {
	var body, seg []byte
	return vec(r, make([]byte, 0, len(r.buf)*3/2), func(i uint32, out []byte) ([]byte, error) {
		raw, err := r.sized()
		if err != nil {
			return nil, err
		}
		body, seg, err = m.body(body[:0], seg, raw, gasIdx, opCost)
		if err != nil {
			return nil, fmt.Errorf("function body %d: %w", i, err)
		}
		out = wasmenc.AppendU32(out, uint32(len(body)))
		return append(out, body...), nil
	})
}

// vec rewrites a wasm vector read from r, a u32 count and then its items:
// it appends the count to out, then each item as item rewrites it (i its
// index, from 0).
func vec(r *reader, out []byte, item func(i uint32, out []byte) ([]byte, error)) ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out = wasmenc.AppendU32(out, n)
	for i := uint32(0); i < n; i++ {
		if out, err = item(i, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (m remapper) body(out, seg, raw []byte, gasIdx uint32, opCost uint64) ([]byte, []byte, error) {
	r := &reader{buf: raw}
	groups, err := r.u32()
	if err != nil {
		return nil, nil, err
	}
	for g := uint32(0); g < groups; g++ {
		if err := r.skipLEB(5); err != nil {
			return nil, nil, err
		}
		if _, err := r.byte(); err != nil {
			return nil, nil, err
		}
	}
	out = append(out, raw[:r.pos]...)
	seg, count, check := seg[:0], 0, true
	for !r.eof() {
		start := r.pos
		op, err := r.byte()
		if err != nil {
			return nil, nil, err
		}
		if op == 0x10 || op == 0xd2 { // call, ref.func
			idx, err := r.u32()
			if err != nil {
				return nil, nil, err
			}
			seg = wasmenc.AppendU32(append(seg, op), m.fn(idx))
		} else {
			if err := skipInstruction(r, op); err != nil {
				return nil, nil, err
			}
			seg = append(seg, raw[start:r.pos]...)
		}
		count++
		if endsSegment(op) {
			out = m.appendCharge(out, gasIdx, uint64(count)*opCost, check)
			out = append(out, seg...)
			seg, count, check = seg[:0], 0, op == 0x03
		}
	}
	if count > 0 {
		return nil, nil, errors.New("function body does not end with end")
	}
	return out, seg, nil
}

// appendCharge emits `gas -= cost` and, with check,
// `if gas < 0 { call tick }`.
func (m remapper) appendCharge(out []byte, gasIdx uint32, cost uint64, check bool) []byte {
	out = wasmenc.AppendU32(append(out, 0x23), gasIdx)
	out = wasmenc.AppendS64(append(out, 0x42), int64(cost))
	out = wasmenc.AppendU32(append(out, 0x7d, 0x24), gasIdx)
	if !check {
		return out
	}
	out = wasmenc.AppendU32(append(out, 0x23), gasIdx)
	out = append(out, 0x42, 0x00, 0x53, 0x04, 0x40, 0x10)
	out = wasmenc.AppendU32(out, m.tick())
	return append(out, 0x0b)
}
