package nearvm

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
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

type section struct {
	id      byte
	payload []byte
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

// prepareModule decodes a contract, replaces an imported env memory with a
// defined one, caps the memory at maxPages, and injects gas metering: a
// mutable i64 global (exported as gasGlobalExport) decremented by opCost per
// instruction at the start of every straight-line run of code, trapping with
// `unreachable` once it turns negative. initialGas is the global's value
// before Call sets it (it only matters for a start function).
func prepareModule(code []byte, maxPages uint32, opCost uint64, initialGas uint64) (*prepared, error) {
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

	gasIdx := importedGlobal + definedGlobals
	gasGlobal := []byte{valI64, 0x01, 0x42}
	gasGlobal = appendS64(gasGlobal, int64(initialGas))
	gasGlobal = append(gasGlobal, 0x0b)
	sections = appendToVecSection(sections, 6, gasGlobal)
	exportEntry := appendName(nil, gasGlobalExport)
	exportEntry = append(exportEntry, 0x03)
	exportEntry = appendU32(exportEntry, gasIdx)
	sections = appendToVecSection(sections, 7, exportEntry)

	for i, s := range sections {
		var err error
		switch s.id {
		case 7:
			err = p.readExports(&reader{buf: s.payload}, types, funcTypeIdx)
		case 10:
			sections[i].payload, err = instrumentCode(&reader{buf: s.payload}, gasIdx, opCost)
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, err)
		}
	}

	out := append([]byte(nil), code[:8]...)
	for _, s := range sections {
		out = append(out, s.id)
		out = appendU32(out, uint32(len(s.payload)))
		out = append(out, s.payload...)
	}
	p.binary = out
	return p, nil
}

func readTypes(r *reader) ([]funcType, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	types := make([]funcType, 0, min(int(n), 1024))
	for i := uint32(0); i < n; i++ {
		form, err := r.byte()
		if err != nil {
			return nil, err
		}
		if form != 0x60 {
			return nil, fmt.Errorf("unsupported type form %#x", form)
		}
		var t funcType
		for _, dst := range []*[]byte{&t.params, &t.results} {
			cnt, err := r.u32()
			if err != nil {
				return nil, err
			}
			b, err := r.bytes(int(cnt))
			if err != nil {
				return nil, err
			}
			*dst = append([]byte(nil), b...)
		}
		types = append(types, t)
	}
	return types, nil
}

// readImports records imports and returns the import section without an
// imported env memory (prepareModule defines it instead).
func (p *prepared) readImports(r *reader, types []funcType, funcTypeIdx *[]uint32, globals *uint32, mem **[2]uint32) ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	var kept []byte
	keptCount := uint32(0)
	for i := uint32(0); i < n; i++ {
		start := r.pos
		module, err := r.name()
		if err != nil {
			return nil, err
		}
		name, err := r.name()
		if err != nil {
			return nil, err
		}
		kind, err := r.byte()
		if err != nil {
			return nil, err
		}
		keep := true
		switch kind {
		case 0x00:
			idx, err := r.u32()
			if err != nil {
				return nil, err
			}
			if int(idx) >= len(types) {
				return nil, fmt.Errorf("import type index %d out of range", idx)
			}
			*funcTypeIdx = append(*funcTypeIdx, idx)
			p.funcImports = append(p.funcImports, funcImport{module: module, name: name, typ: types[idx]})
		case 0x01:
			if _, err := r.byte(); err != nil {
				return nil, err
			}
			if _, _, _, err := r.limits(); err != nil {
				return nil, err
			}
			p.otherImports = append(p.otherImports, linkMessage(module, name, "Table"))
		case 0x02:
			lo, hi, _, err := r.limits()
			if err != nil {
				return nil, err
			}
			if module != "env" || *mem != nil {
				p.otherImports = append(p.otherImports, linkMessage(module, name, "Memory"))
				break
			}
			*mem = &[2]uint32{lo, hi}
			keep = false
		case 0x03:
			if _, err := r.bytes(2); err != nil {
				return nil, err
			}
			*globals++
			p.otherImports = append(p.otherImports, linkMessage(module, name, "Global"))
		default:
			return nil, fmt.Errorf("unknown import kind %#x", kind)
		}
		if keep {
			kept = append(kept, r.buf[start:r.pos]...)
			keptCount++
		}
	}
	return append(appendU32(nil, keptCount), kept...), nil
}

func linkMessage(module, name, expected string) string {
	return fmt.Sprintf("Error while importing %q.%q: unknown import. Expected %s", module, name, expected)
}

func readFunctions(r *reader, funcTypeIdx *[]uint32) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		idx, err := r.u32()
		if err != nil {
			return err
		}
		*funcTypeIdx = append(*funcTypeIdx, idx)
	}
	return nil
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
	out := appendU32(nil, n)
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

func (p *prepared) readExports(r *reader, types []funcType, funcTypeIdx []uint32) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		name, err := r.name()
		if err != nil {
			return err
		}
		kind, err := r.byte()
		if err != nil {
			return err
		}
		idx, err := r.u32()
		if err != nil {
			return err
		}
		if kind != 0x00 {
			if name == gasGlobalExport && kind == 0x03 && i == n-1 {
				continue
			}
			if name == gasGlobalExport {
				return fmt.Errorf("export name %q is reserved", name)
			}
			continue
		}
		if name == gasGlobalExport {
			return fmt.Errorf("export name %q is reserved", name)
		}
		if int(idx) >= len(funcTypeIdx) || int(funcTypeIdx[idx]) >= len(types) {
			return fmt.Errorf("export %q: function index %d out of range", name, idx)
		}
		p.exports[name] = types[funcTypeIdx[idx]]
	}
	return nil
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
		payload := appendU32(nil, n+1)
		payload = append(payload, s.payload[r.pos:]...)
		sections[i].payload = append(payload, entry...)
		return sections
	}
	return insertSection(sections, section{id: id, payload: append([]byte{1}, entry...)})
}

// instrumentCode injects a gas charge at the start of every straight-line
// run of instructions of every function body.
func instrumentCode(r *reader, gasIdx uint32, opCost uint64) ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out := appendU32(make([]byte, 0, len(r.buf)*5/4), n)
	var body []byte
	for i := uint32(0); i < n; i++ {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		raw, err := r.bytes(int(size))
		if err != nil {
			return nil, err
		}
		body, err = instrumentBody(body[:0], raw, gasIdx, opCost)
		if err != nil {
			return nil, fmt.Errorf("function body %d: %w", i, err)
		}
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	return out, nil
}

func instrumentBody(out, raw []byte, gasIdx uint32, opCost uint64) ([]byte, error) {
	r := &reader{buf: raw}
	groups, err := r.u32()
	if err != nil {
		return nil, err
	}
	for g := uint32(0); g < groups; g++ {
		if err := r.skipLEB(5); err != nil {
			return nil, err
		}
		if _, err := r.byte(); err != nil {
			return nil, err
		}
	}
	out = append(out, raw[:r.pos]...)
	segStart, count := r.pos, 0
	for !r.eof() {
		op, err := r.byte()
		if err != nil {
			return nil, err
		}
		if err := skipInstruction(r, op); err != nil {
			return nil, err
		}
		count++
		if endsSegment(op) {
			out = appendCharge(out, gasIdx, uint64(count)*opCost)
			out = append(out, raw[segStart:r.pos]...)
			segStart, count = r.pos, 0
		}
	}
	if count > 0 {
		return nil, errors.New("function body does not end with end")
	}
	return out, nil
}

// appendCharge emits: gas -= cost; if gas < 0 { unreachable }.
func appendCharge(out []byte, gasIdx uint32, cost uint64) []byte {
	out = append(out, 0x23)
	out = appendU32(out, gasIdx)
	out = append(out, 0x42)
	out = appendS64(out, int64(cost))
	out = append(out, 0x7d, 0x24)
	out = appendU32(out, gasIdx)
	out = append(out, 0x23)
	out = appendU32(out, gasIdx)
	// i64.const 0; i64.lt_s; if (empty) unreachable end
	return append(out, 0x42, 0x00, 0x53, 0x04, 0x40, 0x00, 0x0b)
}
