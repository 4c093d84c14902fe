package verify

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/fixture"
)

// TestWasmExportsOfRealContracts reads the exports of every compiled
// contract in the fixtures and checks them against the list recorded
// beside each (by a wasm tool, when the fixture was added).
func TestWasmExportsOfRealContracts(t *testing.T) {
	t.Parallel()
	files := fixture.Glob(t, "wasm/*.wasm")
	require.NotEmpty(t, files)
	for _, path := range files {
		code, err := os.ReadFile(path)
		require.NoError(t, err)
		raw, err := os.ReadFile(strings.TrimSuffix(path, ".wasm") + ".json")
		require.NoError(t, err)
		var desc struct {
			Exports []string `json:"exports"`
		}
		require.NoError(t, json.Unmarshal(raw, &desc))
		got, err := wasmExports(code)
		require.NoError(t, err, path)
		require.Equal(t, desc.Exports, got, path)
	}
}

func TestWasmExportsRefusesWhatIsNotWasm(t *testing.T) {
	t.Parallel()
	for _, code := range [][]byte{nil, []byte("\x00as"), []byte("#!/bin/sh\nexit 0\n"), []byte("\x00asm\x01\x00\x00\x00\x07\x05\x01")} {
		_, err := wasmExports(code)
		require.ErrorIs(t, err, errNotWasm, "%q", code)
	}
	// A module without an export section exports nothing.
	got, err := wasmExports([]byte("\x00asm\x01\x00\x00\x00"))
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestChooseCalls(t *testing.T) {
	t.Parallel()
	ft := []string{"new_default_meta", "new", "ft_transfer", "ft_total_supply", "ft_balance_of", "storage_balance_of", "ft_metadata", "__contract_abi"}
	for _, c := range []struct {
		name    string
		exports []string
		n       int
		want    []string
	}{
		{"view-like first, in export order", ft, 4, []string{"ft_total_supply", "ft_balance_of", "storage_balance_of", "ft_metadata"}},
		{"capped", ft, 2, []string{"ft_total_supply", "ft_balance_of"}},
		{"status message", []string{"metadata", "set_status", "get_status"}, 4, []string{"metadata", "get_status"}},
		{"no view-like: two others", []string{"add_message", "__abi", "withdraw", "ping"}, 4, []string{"add_message", "withdraw"}},
		{"no view-like, cap 1", []string{"add_message", "withdraw"}, 1, []string{"add_message"}},
		{"nothing to call", []string{"__contract_abi"}, 4, nil},
	} {
		require.Equal(t, c.want, chooseCalls(c.exports, c.n), c.name)
	}
}
