package nearvm

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/nearline/nearline/nearvm/internal/wasmenc"
)

// wasmHeader is the magic and version every module this package reads and
// writes begins with.
const wasmHeader = "\x00asm\x01\x00\x00\x00"

// Section ids and export kinds the package names.
const (
	exportSection = 7

	funcExport   = 0x00
	globalExport = 0x03
)

// section is one section of a module: its id and payload.
type section struct {
	id      byte
	payload []byte
}

// readSections checks a module's magic and version and splits it into its
// sections, in order.
func readSections(code []byte) ([]section, error) {
	if len(code) < len(wasmHeader) || !bytes.Equal(code[:len(wasmHeader)], []byte(wasmHeader)) {
		return nil, errors.New("not a wasm binary (bad magic or version)")
	}
	r := &reader{buf: code, pos: len(wasmHeader)}
	var sections []section
	for !r.eof() {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		payload, err := r.sized()
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

// appendSection appends s as the binary format writes a section: id, size,
// payload.
func appendSection(b []byte, s section) []byte {
	b = wasmenc.AppendU32(append(b, s.id), uint32(len(s.payload)))
	return append(b, s.payload...)
}

// encodeModule writes a module of sections, in the order given.
func encodeModule(sections []section) []byte {
	out := []byte(wasmHeader)
	for _, s := range sections {
		out = appendSection(out, s)
	}
	return out
}

// export is one entry of the export section.
type export struct {
	name  string
	kind  byte // funcExport, 0x01 table, 0x02 memory, globalExport
	index uint32
}

// export reads an export entry.
func (r *reader) export() (export, error) {
	name, err := r.name()
	if err != nil {
		return export{}, err
	}
	kind, err := r.byte()
	if err != nil {
		return export{}, err
	}
	index, err := r.u32()
	return export{name: name, kind: kind, index: index}, err
}

// appendExport appends e as the export section writes it.
func appendExport(b []byte, e export) []byte {
	return wasmenc.AppendU32(append(wasmenc.AppendName(b, e.name), e.kind), e.index)
}

// vec reads a vector: its length, then item called that many times to read
// one entry each, up to the first error.
func (r *reader) vec(item func() error) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for range n {
		if err := item(); err != nil {
			return err
		}
	}
	return nil
}
