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

// TestTaggedEnumsRoundTrip decodes every action and genesis record kind
// and encodes it again: each modelled kind fills its own field, any other
// stays Other, and what comes in goes out byte for byte.
func TestTaggedEnumsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, kind string
		other    bool // kept as it came, not modelled
	}{
		{`"CreateAccount"`, "CreateAccount", false},
		{`{"DeployContract":{"code":"AGFzbQ=="}}`, "DeployContract", false},
		{`{"FunctionCall":{"method_name":"m","args":"e30=","gas":30,"deposit":"1"}}`, "FunctionCall", false},
		{`{"Transfer":{"deposit":"5"}}`, "Transfer", false},
		{`{"Stake":{"stake":"7","public_key":"ed25519:k"}}`, "Stake", false},
		{`{"AddKey":{"public_key":"ed25519:k","access_key":{"nonce":0,"permission":"FullAccess"}}}`, "AddKey", false},
		{`{"DeleteKey":{"public_key":"ed25519:k"}}`, "DeleteKey", false},
		{`{"DeleteAccount":{"beneficiary_id":"b.near"}}`, "DeleteAccount", false},
		{`{"DeployGlobalContract":{"code":"AGFzbQ=="}}`, ActionDeployGlobalContract, false},
		{`{"DeployGlobalContractByAccountId":{"code":"AGFzbQ=="}}`, ActionDeployGlobalContractByAccountID, false},
		{`{"UseGlobalContract":{"code_hash":"h"}}`, ActionUseGlobalContract, false},
		{`{"UseGlobalContractByAccountId":{"account_id":"g.near"}}`, ActionUseGlobalContractByAccountID, false},
		{`{"TransferToGasKey":{"public_key":"ed25519:k","deposit":"1"}}`, "TransferToGasKey", true},
		{`"SomeUnitAction"`, "SomeUnitAction", true},
	} {
		var a ActionView
		require.NoError(t, json.Unmarshal([]byte(tc.in), &a), tc.in)
		require.Equal(t, tc.kind, a.Kind(), tc.in)
		require.Equal(t, tc.other, a.Other != nil, tc.in)
		out, err := json.Marshal(a)
		require.NoError(t, err)
		require.Equal(t, tc.in, string(out))
	}

	// A null body decodes as the zero body, which encodes in full.
	var a ActionView
	require.NoError(t, json.Unmarshal([]byte(`{"Transfer":null}`), &a))
	out, err := json.Marshal(a)
	require.NoError(t, err)
	require.Equal(t, `{"Transfer":{"deposit":"0"}}`, string(out))

	for _, in := range []string{`{}`, `{"Transfer":{"deposit":"5"},"Data":{}}`, `[1]`} {
		require.Error(t, json.Unmarshal([]byte(in), new(ActionView)), in)
		require.Error(t, json.Unmarshal([]byte(in), new(StateRecord)), in)
	}
	require.Error(t, json.Unmarshal([]byte(`{"Transfer":{"deposit":[]}}`), new(ActionView)))
	require.Error(t, json.Unmarshal([]byte(`{"Data":{"value":5}}`), new(StateRecord)))
	_, err = json.Marshal(ActionView{})
	require.Error(t, err)
	_, err = json.Marshal(StateRecord{})
	require.Error(t, err)

	for _, tc := range []struct {
		in    string
		other bool
	}{
		{`{"Account":{"account_id":"a.near","account":{"amount":"1","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":1,"version":"V1"}}}`, false},
		{`{"AccessKey":{"account_id":"a.near","public_key":"ed25519:k","access_key":{"nonce":0,"permission":"FullAccess"}}}`, false},
		{`{"Contract":{"account_id":"a.near","code":"AGFzbQ=="}}`, false},
		{`{"Data":{"account_id":"a.near","data_key":"AQ==","value":"Ag=="}}`, false},
		{`{"PostponedReceipt":{"receiver_id":"a.near"}}`, true},
	} {
		var r StateRecord
		require.NoError(t, json.Unmarshal([]byte(tc.in), &r), tc.in)
		require.Equal(t, tc.other, r.Other != nil, tc.in)
		require.Equal(t, !tc.other, r.Account != nil || r.AccessKey != nil || r.Contract != nil || r.Data != nil, tc.in)
		out, err := json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, tc.in, string(out))
	}
}
