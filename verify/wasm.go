package verify

import (
	"bytes"
	"errors"
	"fmt"
)

// errNotWasm is code that is not a WebAssembly module.
var errNotWasm = errors.New("not a wasm module")

// wasmExports returns the names of the functions a WebAssembly module
// exports, in the order it lists them: what call_function can call.
func wasmExports(code []byte) ([]string, error) {
	if len(code) < 8 || !bytes.Equal(code[:4], []byte("\x00asm")) {
		return nil, errNotWasm
	}
	r := wasmReader{b: code[8:]}
	for len(r.b) > 0 {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		section, err := r.take(int(size))
		if err != nil {
			return nil, err
		}
		const exportSection = 7
		if id == exportSection {
			return readExports(wasmReader{b: section})
		}
	}
	return nil, nil
}

func readExports(r wasmReader) ([]string, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	var names []string
	for range n {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		name, err := r.take(int(size))
		if err != nil {
			return nil, err
		}
		kind, err := r.byte()
		if err != nil {
			return nil, err
		}
		if _, err := r.u32(); err != nil { // the function's index
			return nil, err
		}
		const funcExport = 0
		if kind == funcExport {
			names = append(names, string(name))
		}
	}
	return names, nil
}

// wasmReader reads a module's bytes front to back.
type wasmReader struct{ b []byte }

func (r *wasmReader) byte() (byte, error) {
	if len(r.b) == 0 {
		return 0, fmt.Errorf("%w: truncated", errNotWasm)
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, nil
}

func (r *wasmReader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b) {
		return nil, fmt.Errorf("%w: truncated", errNotWasm)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out, nil
}

// u32 reads an unsigned LEB128 of at most 5 bytes.
func (r *wasmReader) u32() (uint32, error) {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: integer too long", errNotWasm)
}
