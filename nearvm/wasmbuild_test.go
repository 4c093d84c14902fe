package nearvm

// A tiny WebAssembly module assembler for tests: enough to hand-write
// modules that loop, trap, grow memory or call host functions.

type testImport struct {
	name    string
	params  int // i64 parameters (i32 with i32Params)
	results int // i64 results
	// i32Params makes the parameters i32 (AssemblyScript's abort).
	i32Params bool
	// i32Result makes the result i32 (promise_yield_resume's u32).
	i32Result bool
}

type testFunc struct {
	export string
	locals []byte // one entry per local: its value type
	body   []byte // instructions, without the final end
	params int    // i64 parameters (for signature tests)
}

type testModule struct {
	imports   []testImport
	importMem bool   // import env.memory instead of defining one
	memPages  uint32 // memory minimum
	funcs     []testFunc
	data      []testData
}

type testData struct {
	offset uint32
	bytes  []byte
}

func encodeSection(id byte, payload []byte) []byte {
	return appendSection(nil, section{id: id, payload: payload})
}

func i64Type(params, results int) []byte {
	t := []byte{0x60}
	t = appendU32(t, uint32(params))
	for i := 0; i < params; i++ {
		t = append(t, valI64)
	}
	t = appendU32(t, uint32(results))
	for i := 0; i < results; i++ {
		t = append(t, valI64)
	}
	return t
}

func (m testModule) encode() []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	// One type per import and per function, in that order.
	var types []byte
	n := 0
	for _, imp := range m.imports {
		t := i64Type(imp.params, imp.results)
		if imp.i32Params {
			for i := 0; i < imp.params; i++ {
				t[2+i] = valI32
			}
		}
		if imp.i32Result && imp.results == 1 {
			t[len(t)-1] = valI32
		}
		types = append(types, t...)
		n++
	}
	for _, f := range m.funcs {
		types = append(types, i64Type(f.params, 0)...)
		n++
	}
	out = append(out, encodeSection(1, append(appendU32(nil, uint32(n)), types...))...)

	var imports []byte
	count := len(m.imports)
	for i, imp := range m.imports {
		imports = appendName(imports, "env")
		imports = appendName(imports, imp.name)
		imports = append(imports, 0x00)
		imports = appendU32(imports, uint32(i))
	}
	if m.importMem {
		imports = appendName(imports, "env")
		imports = appendName(imports, "memory")
		imports = append(imports, 0x02, 0x00)
		imports = appendU32(imports, m.memPages)
		count++
	}
	if count > 0 {
		out = append(out, encodeSection(2, append(appendU32(nil, uint32(count)), imports...))...)
	}

	funcs := appendU32(nil, uint32(len(m.funcs)))
	for i := range m.funcs {
		funcs = appendU32(funcs, uint32(len(m.imports)+i))
	}
	out = append(out, encodeSection(3, funcs)...)

	if !m.importMem {
		out = append(out, encodeSection(5, append([]byte{1, 0x00}, appendU32(nil, m.memPages)...))...)
	}

	var exports []byte
	exportCount := 0
	for i, f := range m.funcs {
		if f.export == "" {
			continue
		}
		exports = appendName(exports, f.export)
		exports = append(exports, 0x00)
		exports = appendU32(exports, uint32(len(m.imports)+i))
		exportCount++
	}
	exports = appendName(exports, "memory")
	exports = append(exports, 0x02, 0x00)
	out = append(out, encodeSection(7, append(appendU32(nil, uint32(exportCount+1)), exports...))...)

	code := appendU32(nil, uint32(len(m.funcs)))
	for _, f := range m.funcs {
		body := appendU32(nil, uint32(len(f.locals)))
		for _, l := range f.locals {
			body = append(body, 1, l)
		}
		body = append(body, f.body...)
		body = append(body, 0x0b)
		code = appendU32(code, uint32(len(body)))
		code = append(code, body...)
	}
	out = append(out, encodeSection(10, code)...)

	if len(m.data) > 0 {
		data := appendU32(nil, uint32(len(m.data)))
		for _, d := range m.data {
			data = append(data, 0x00, 0x41)
			data = appendS64(data, int64(int32(d.offset)))
			data = append(data, 0x0b)
			data = appendU32(data, uint32(len(d.bytes)))
			data = append(data, d.bytes...)
		}
		out = append(out, encodeSection(11, data)...)
	}
	return out
}

// Instruction helpers.

func i64c(v int64) []byte { return appendS64([]byte{0x42}, v) }
func i32c(v int32) []byte { return appendS64([]byte{0x41}, int64(v)) }

// call calls function index idx (imports come first).
func call(idx int) []byte { return appendU32([]byte{0x10}, uint32(idx)) }

func ops(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
