package near

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExtraMembersRoundTrip decodes and encodes again the views that keep
// the members Nearline does not model: what comes in goes out, in order.
func TestExtraMembersRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		value func() any // a fresh value to decode into
		in    string
		extra string // the Extra it must hold
	}{
		{"access key, nothing more", func() any { return new(AccessKeyView) },
			`{"nonce":1,"permission":"FullAccess"}`, ``},
		{"access key with gas key info", func() any { return new(AccessKeyView) },
			`{"nonce":1,"permission":{"FunctionCall":{"allowance":null,"receiver_id":"a.near","method_names":["m"]}},"gas_key_info":{"num_nonces":2},"x":null}`,
			`{"gas_key_info":{"num_nonces":2},"x":null}`},
		{"view_access_key result", func() any { return new(AccessKeyResult) },
			`{"nonce":1,"permission":"FullAccess","gas_key_info":null,"block_height":9,"block_hash":"h"}`, `{"gas_key_info":null}`},
		{"view_access_key_list entry", func() any { return new(AccessKeyInfoView) },
			`{"public_key":"ed25519:k","access_key":{"nonce":1,"permission":"FullAccess","gas_key_info":null}}`, `{"gas_key_info":null}`},
		{"view_account result", func() any { return new(AccountView) },
			`{"amount":"1","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":1,"storage_paid_at":0,"global_contract_hash":null,"block_height":9,"block_hash":"h"}`,
			`{"global_contract_hash":null}`},
		{"genesis account", func() any { return new(GenesisAccount) },
			`{"amount":"1","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":1,"version":"V2","global_contract_account_id":"c.near"}`,
			`{"global_contract_account_id":"c.near"}`},
		{"genesis account, nothing more", func() any { return new(GenesisAccount) },
			`{"amount":"1","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":1,"version":"V1"}`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := tc.value()
			require.NoError(t, json.Unmarshal([]byte(tc.in), v))
			var extra json.RawMessage
			switch v := v.(type) {
			case *AccessKeyView:
				extra = v.Extra
			case *AccessKeyResult:
				extra = v.Extra
				require.Equal(t, BlockStamp{BlockHeight: 9, BlockHash: "h"}, v.BlockStamp)
			case *AccessKeyInfoView:
				extra = v.AccessKey.Extra
			case *AccountView:
				extra = v.Extra
				require.Equal(t, BlockStamp{BlockHeight: 9, BlockHash: "h"}, v.BlockStamp)
			case *GenesisAccount:
				extra = v.Extra
			}
			require.Equal(t, tc.extra, string(extra))
			out, err := json.Marshal(v)
			require.NoError(t, err)
			require.Equal(t, tc.in, string(out))
		})
	}
}
