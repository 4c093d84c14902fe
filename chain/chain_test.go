package chain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/chain"
)

func identity(t *testing.T, cfg string, hash string) chain.Identity {
	t.Helper()
	id, err := chain.FromConfig(json.RawMessage(cfg))
	require.NoError(t, err)
	id.GenesisHash = hash
	return id
}

func TestCompare(t *testing.T) {
	t.Parallel()
	base := `{"chain_id":"sim","genesis_height":0,"genesis_time":"2025-01-01T00:00:00Z","validators":[{"account_id":"node0.near","public_key":"ed25519:A","amount":"1"}],"total_supply":"100"}`
	for _, c := range []struct {
		name       string
		a, b       string
		aHash      string
		bHash      string
		wantParts  []string // empty: the same chain
		notInError string
	}{
		{name: "same", a: base, b: base, aHash: "H", bHash: "H"},
		{name: "hash unknown on one side", a: base, b: base, aHash: "H"},
		{name: "other members and order do not matter", a: base,
			b: `{"total_supply":"100","genesis_height":0,"chain_id":"sim","genesis_time":"2025-01-01T00:00:00Z","validators":[{"public_key":"ed25519:A","amount":"1","account_id":"node0.near"}],"num_blocks_per_year":5}`},
		{name: "chain id and height", a: base, b: `{"chain_id":"testnet","genesis_height":7}`,
			wantParts: []string{`chain_id: A says "sim", B says "testnet"`, "genesis_height: A says 0, B says 7"}},
		{name: "genesis hash", a: base, b: base, aHash: "H1", bHash: "H2",
			wantParts: []string{`genesis block hash: A says "H1", B says "H2"`}},
		{name: "validators of another seed", a: base, b: strings.Replace(base, "ed25519:A", "ed25519:B", 1),
			wantParts: []string{`validators[0].public_key: A says "ed25519:A", B says "ed25519:B"`}, notInError: "chain_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := chain.Compare(identity(t, c.a, c.aHash), "A", identity(t, c.b, c.bHash), "B")
			if len(c.wantParts) == 0 {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, chain.ErrOtherChain)
			require.Contains(t, err.Error(), "B is of another chain than A")
			for _, p := range c.wantParts {
				require.Contains(t, err.Error(), p)
			}
			if c.notInError != "" {
				require.NotContains(t, err.Error(), c.notInError)
			}
		})
	}
}

func TestFromConfigNeedsChainIDAndHeight(t *testing.T) {
	t.Parallel()
	for _, cfg := range []string{`{"chain_id":"x"}`, `{"genesis_height":1}`, `[]`, `nope`} {
		_, err := chain.FromConfig(json.RawMessage(cfg))
		require.Error(t, err, cfg)
	}
}
