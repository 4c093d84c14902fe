package nearvm

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/nearline/nearline/nearvm/internal/wasmenc"
)

// gasGlobalExport is the export name of the global that holds the remaining
// gas of a call. The instrumenter appends the global, so no contract code can
// address it.
const gasGlobalExport = "__nearline_gas"

// errMemoryLimits marks a memory the runtime cannot provide (PrepareError::Memory).
var errMemoryLimits = errors.New("memory limits exceed the runtime limit")

type funcType struct {
	params  []byte
	results []byte
}

func (t funcType) String() string {
	names := func(v []byte) string {
		s := make([]string, len(v))
		for i, b := range v {
			s[i] = valTypeName(b)
		}
		return strings.Join(s, ", ")
	}
	return fmt.Sprintf("FunctionType { params: [%s], results: [%s] }", names(t.params), names(t.results))
}

func (t funcType) equal(o funcType) bool {
	return bytes.Equal(t.params, o.params) && bytes.Equal(t.results, o.results)
}

type funcImport struct {
	module, name string
	typ          funcType
}

// prepared is a contract after instrumentation, with what Call needs to know
// about its imports and exports without asking wazero.
type prepared struct {
	binary      []byte
	funcImports []funcImport
	// otherImports are imports the runtime cannot satisfy (tables, globals,
	// memories outside env), as nearcore-style LinkError messages.
	otherImports []string
	// exports maps every exported function to its type; exported non-functions
	// are absent (they resolve like a missing method).
	exports map[string]funcType
}

// sectionRank orders known sections as the binary format requires.
func sectionRank(id byte) int {
	switch id {
	case 12: // data count comes between element and code
		return 10
	case 10:
		return 11
	case 11:
		return 12
	}
	return int(id)
}

// tickImport is the host function the instrumented code calls when its gas
// slice runs out (see gas.go). It is appended as the last function import.
const tickImport = "__nearline_gas_tick"

// prepareModule decodes a contract and rewrites it for the runtime:
//   - an imported env memory becomes a defined one, and no memory may grow
//     beyond maxPages;
//   - gas metering: a mutable i64 global (exported as gasGlobalExport) holds
//     the current gas slice; every straight-line run of code subtracts opCost
//     per instruction from it, and every function entry and loop header calls
//     the env tickImport function when it is negative;
//   - the tick import shifts every defined function index by one, so calls,
//     ref.func, exports, the start function and element segments are
//     renumbered; the debug "name" section is dropped.
func prepareModule(code []byte, maxPages uint32, opCost uint64) (*prepared, error) {
	all, err := readSections(code)
	if err != nil {
		return nil, err
	}
	var sections []section
	for _, s := range all {
		if s.id == 0 {
			if name, err := (&reader{buf: s.payload}).name(); err == nil && name == "name" {
				continue
			}
		}
		sections = append(sections, s)
	}

	p := &prepared{exports: map[string]funcType{}}
	var (
		types          []funcType
		funcTypeIdx    []uint32 // type index per function, imports first
		importedGlobal uint32
		definedGlobals uint32
		memFromImport  *[2]uint32 // min, max of an imported env memory
		memDefined     bool
	)
	for i, s := range sections {
		sr := &reader{buf: s.payload}
		var err error
		switch s.id {
		case 1:
			types, err = readTypes(sr)
		case 2:
			var newPayload []byte
			newPayload, err = p.readImports(sr, types, &funcTypeIdx, &importedGlobal, &memFromImport)
			sections[i].payload = newPayload
		case 3:
			err = readFunctions(sr, &funcTypeIdx)
		case 5:
			memDefined = true
			sections[i].payload, err = clampMemories(sr, maxPages)
		case 6:
			definedGlobals, err = sr.u32()
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, err)
		}
	}
	if memFromImport == nil && !memDefined {
		// nearcore hands every contract a memory, used or not; host functions
		// need one.
		sections = insertSection(sections, section{id: 5, payload: appendLimits([]byte{1}, 1, maxPages)})
	}
	if memFromImport != nil {
		if memDefined {
			return nil, errors.New("module both imports and defines a memory")
		}
		minPages := memFromImport[0]
		if minPages > maxPages {
			return nil, errMemoryLimits
		}
		payload := appendLimits([]byte{1}, minPages, maxPages)
		sections = insertSection(sections, section{id: 5, payload: payload})
	}

	// The tick function: type () -> (), imported last.
	tickType := uint32(len(types))
	sections = appendToVecSection(sections, 1, []byte{0x60, 0x00, 0x00})
	tickEntry := wasmenc.AppendName(wasmenc.AppendName(nil, "env"), tickImport)
	tickEntry = wasmenc.AppendU32(append(tickEntry, 0x00), tickType)
	sections = appendToVecSection(sections, 2, tickEntry)
	m := remapper{imported: uint32(len(p.funcImports))}

	gasIdx := importedGlobal + definedGlobals
	sections = appendToVecSection(sections, 6, []byte{valI64, 0x01, 0x42, 0x00, 0x0b})
	sections = appendToVecSection(sections, exportSection, appendExport(nil, export{name: gasGlobalExport, kind: globalExport, index: gasIdx}))

	for i, s := range sections {
		sr := &reader{buf: s.payload}
		var err error
		switch s.id {
		case 6:
			sections[i].payload, err = m.globals(sr)
		case 7:
			sections[i].payload, err = p.readExports(sr, types, funcTypeIdx, m)
		case 8:
			var start uint32
			if start, err = sr.u32(); err == nil {
				sections[i].payload = wasmenc.AppendU32(nil, m.fn(start))
			}
		case 9:
			sections[i].payload, err = m.elements(sr)
		case 10:
			sections[i].payload, err = m.code(sr, gasIdx, opCost)
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, err)
		}
	}

	p.binary = encodeModule(sections)
	return p, nil
}

func readTypes(r *reader) ([]funcType, error) {
	var types []funcType
	err := r.vec(func() error {
		form, err := r.byte()
		if err != nil {
			return err
		}
		if form != 0x60 {
			return fmt.Errorf("unsupported type form %#x", form)
		}
		var t funcType
		for _, dst := range []*[]byte{&t.params, &t.results} {
			b, err := r.sized()
			if err != nil {
				return err
			}
			*dst = append([]byte(nil), b...)
		}
		types = append(types, t)
		return nil
	})
	return types, err
}

// readImports records imports and returns the import section without an
// imported env memory (prepareModule defines it instead).
func (p *prepared) readImports(r *reader, types []funcType, funcTypeIdx *[]uint32, globals *uint32, mem **[2]uint32) ([]byte, error) {
	var kept []byte
	keptCount := uint32(0)
	err := r.vec(func() error {
		start := r.pos
		module, err := r.name()
		if err != nil {
			return err
		}
		name, err := r.name()
		if err != nil {
			return err
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		keep := true
		switch kind {
		case 0x00:
			idx, err := r.u32()
			if err != nil {
				return err
			}
			if int(idx) >= len(types) {
				return fmt.Errorf("import type index %d out of range", idx)
			}
			*funcTypeIdx = append(*funcTypeIdx, idx)
			p.funcImports = append(p.funcImports, funcImport{module: module, name: name, typ: types[idx]})
		case 0x01:
			if _, err := r.byte(); err != nil {
				return err
			}
			if _, _, _, err := r.limits(); err != nil {
				return err
			}
			p.otherImports = append(p.otherImports, linkMessage(module, name, "Table"))
		case 0x02:
			lo, hi, _, err := r.limits()
			if err != nil {
				return err
			}
			if module != "env" || *mem != nil {
				p.otherImports = append(p.otherImports, linkMessage(module, name, "Memory"))
				break
			}
			*mem = &[2]uint32{lo, hi}
			keep = false
		case 0x03:
			if _, err := r.bytes(2); err != nil {
				return err
			}
			*globals++
			p.otherImports = append(p.otherImports, linkMessage(module, name, "Global"))
		default:
			return fmt.Errorf("unknown import kind %#x", kind)
		}
		if keep {
			kept = append(kept, r.buf[start:r.pos]...)
			keptCount++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(wasmenc.AppendU32(nil, keptCount), kept...), nil
}

func linkMessage(module, name, expected string) string {
	return fmt.Sprintf("Error while importing %q.%q: unknown import. Expected %s", module, name, expected)
}

func readFunctions(r *reader, funcTypeIdx *[]uint32) error {
	return r.vec(func() error {
		idx, err := r.u32()
		if err != nil {
			return err
		}
		*funcTypeIdx = append(*funcTypeIdx, idx)
		return nil
	})
}

// clampMemories rewrites the memory section so that no memory may grow past
// maxPages, as nearcore's max_memory_pages does.
func clampMemories(r *reader, maxPages uint32) ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if n > 1 {
		return nil, errors.New("more than one memory")
	}
	out := wasmenc.AppendU32(nil, n)
	for i := uint32(0); i < n; i++ {
		lo, hi, hasMax, err := r.limits()
		if err != nil {
			return nil, err
		}
		if lo > maxPages {
			return nil, errMemoryLimits
		}
		if !hasMax || hi > maxPages {
			hi = maxPages
		}
		out = appendLimits(out, lo, hi)
	}
	return out, nil
}

// readExports records the exported functions' types and returns the export
// section with function indices renumbered.
func (p *prepared) readExports(r *reader, types []funcType, funcTypeIdx []uint32, m remapper) ([]byte, error) {
	var (
		out     []byte
		count   uint32
		seenGas bool
	)
	err := r.vec(func() error {
		e, err := r.export()
		if err != nil {
			return err
		}
		if e.name == gasGlobalExport {
			if seenGas || e.kind != globalExport {
				return fmt.Errorf("export name %q is reserved", e.name)
			}
			seenGas = true
		}
		if e.kind == funcExport {
			if int(e.index) >= len(funcTypeIdx) || int(funcTypeIdx[e.index]) >= len(types) {
				return fmt.Errorf("export %q: function index %d out of range", e.name, e.index)
			}
			p.exports[e.name] = types[funcTypeIdx[e.index]]
			e.index = m.fn(e.index)
		}
		out = appendExport(out, e)
		count++
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(wasmenc.AppendU32(nil, count), out...), nil
}

func insertSection(sections []section, s section) []section {
	at := len(sections)
	for i, existing := range sections {
		if existing.id != 0 && sectionRank(existing.id) > sectionRank(s.id) {
			at = i
			break
		}
	}
	sections = append(sections, section{})
	copy(sections[at+1:], sections[at:])
	sections[at] = s
	return sections
}

// appendToVecSection appends one entry to a vector section (globals,
// exports), creating the section when the module has none.
func appendToVecSection(sections []section, id byte, entry []byte) []section {
	for i, s := range sections {
		if s.id != id {
			continue
		}
		r := &reader{buf: s.payload}
		n, err := r.u32()
		if err != nil {
			n, r.pos = 0, len(s.payload)
		}
		payload := wasmenc.AppendU32(nil, n+1)
		payload = append(payload, s.payload[r.pos:]...)
		sections[i].payload = append(payload, entry...)
		return sections
	}
	return insertSection(sections, section{id: id, payload: append([]byte{1}, entry...)})
}
