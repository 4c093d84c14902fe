package nearvm

// ExportedFunctions returns the names of the functions a contract's WASM
// exports, in the order the module lists them: the methods call_function
// can name. It reads the module's structure only; it neither compiles nor
// validates the code.
func ExportedFunctions(code []byte) ([]string, error) {
	sections, err := readSections(code)
	if err != nil {
		return nil, err
	}
	for _, s := range sections {
		if s.id != exportSection {
			continue
		}
		r := &reader{buf: s.payload}
		var names []string
		err := r.vec(func() error {
			e, err := r.export()
			if err == nil && e.kind == funcExport {
				names = append(names, e.name)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		return names, nil
	}
	return nil, nil
}
