package nearvm

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExportedFunctionsOfRealContracts reads the exports of every compiled
// contract in the fixtures and checks them against the list recorded in
// its descriptor.
func TestExportedFunctionsOfRealContracts(t *testing.T) {
	t.Parallel()
	for _, name := range fixtureNames(t) {
		f := loadFixture(t, name)
		got, err := ExportedFunctions(f.Code)
		require.NoError(t, err, name)
		require.Equal(t, f.Exports, got, name)
	}
}

func TestExportedFunctionsRefusesWhatIsNotWasm(t *testing.T) {
	t.Parallel()
	for _, code := range [][]byte{nil, []byte("\x00as"), []byte("#!/bin/sh\nexit 0\n"), []byte("\x00asm\x01\x00\x00\x00\x07\x05\x01")} {
		_, err := ExportedFunctions(code)
		require.Error(t, err, "%q", code)
	}
	// A module without an export section exports nothing.
	got, err := ExportedFunctions([]byte("\x00asm\x01\x00\x00\x00"))
	require.NoError(t, err)
	require.Empty(t, got)
}
