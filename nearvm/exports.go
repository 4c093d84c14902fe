package nearvm

import (
	"bytes"
	"errors"
	"fmt"
)

// readSections checks a module's magic and version and splits it into its
// sections, in order.
func readSections(code []byte) ([]section, error) {
	if len(code) < 8 || !bytes.Equal(code[:4], []byte("\x00asm")) || !bytes.Equal(code[4:8], []byte{1, 0, 0, 0}) {
		return nil, errors.New("not a wasm binary (bad magic or version)")
	}
	r := &reader{buf: code, pos: 8}
	var sections []section
	for !r.eof() {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		payload, err := r.bytes(int(size))
		if err != nil {
			return nil, err
		}
		if id > 12 {
			return nil, fmt.Errorf("unknown section id %d", id)
		}
		sections = append(sections, section{id: id, payload: payload})
	}
	return sections, nil
}

// ExportedFunctions returns the names of the functions a contract's WASM
// exports, in the order the module lists them: the methods call_function
// can name. It reads the module's structure only; it neither compiles nor
// validates the code.
func ExportedFunctions(code []byte) ([]string, error) {
	sections, err := readSections(code)
	if err != nil {
		return nil, err
	}
	const exportSection, funcExport = 7, 0x00
	for _, s := range sections {
		if s.id != exportSection {
			continue
		}
		r := &reader{buf: s.payload}
		n, err := r.u32()
		if err != nil {
			return nil, err
		}
		var names []string
		for range n {
			name, err := r.name()
			if err != nil {
				return nil, err
			}
			kind, err := r.byte()
			if err != nil {
				return nil, err
			}
			if _, err := r.u32(); err != nil {
				return nil, err
			}
			if kind == funcExport {
				names = append(names, name)
			}
		}
		return names, nil
	}
	return nil, nil
}
