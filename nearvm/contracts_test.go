package nearvm

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// harness drives one fixture contract: change calls whose writes are applied
// to an in-memory state, and view calls against that state.
type harness struct {
	t       *testing.T
	r       *Runtime
	f       *fixture
	st      *memStorage
	account string
	balance U128
	usage   uint64
}

func newHarness(t *testing.T, r *Runtime, name string) *harness {
	return &harness{t: t, r: r, f: loadFixture(t, name), st: newMemStorage(), account: "contract.near",
		balance: nearAmount(t, "100"), usage: 1000}
}

func (h *harness) ctx(c Context) Context {
	c.AccountBalance = h.balance
	c.StorageUsage = h.usage
	return c
}

// change runs method in change mode from signer and applies its writes.
func (h *harness) change(method, signer string, args any, deposit U128) *Outcome {
	h.t.Helper()
	out, err := h.r.Call(context.Background(), h.f.Code, h.f.CodeHash, method,
		h.ctx(changeCtx(h.account, signer, args, deposit)), h.st)
	require.NoError(h.t, err, "%s.%s", h.f.Name, method)
	h.st.apply(out)
	h.usage = out.StorageUsage
	return out
}

// view runs method in view mode and returns its result bytes.
func (h *harness) view(method string, args any) []byte {
	h.t.Helper()
	out, err := h.r.Call(context.Background(), h.f.Code, h.f.CodeHash, method, h.ctx(viewCtx(h.account, args)), h.st)
	require.NoError(h.t, err, "%s.%s", h.f.Name, method)
	require.Empty(h.t, out.Writes)
	return out.ReturnData
}

func (h *harness) viewEq(method string, args any, wantJSON string) {
	h.t.Helper()
	require.JSONEq(h.t, wantJSON, string(h.view(method, args)), "%s.%s", h.f.Name, method)
}

func TestFungibleToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "fungible_token")
	h.change("new_default_meta", "owner.near", map[string]string{"owner_id": "owner.near", "total_supply": "1000000"}, U128{})

	bounds := h.view("storage_balance_bounds", map[string]any{})
	var b struct{ Min, Max string }
	require.NoError(t, json.Unmarshal(bounds, &b))
	require.NotEmpty(t, b.Min)
	minDeposit, err := ParseU128(b.Min)
	require.NoError(t, err)

	out := h.change("storage_deposit", "alice.near", map[string]string{"account_id": "alice.near"}, nearAmount(t, "1"))
	require.Len(t, out.Receipts, 1, "refund of the deposit beyond the minimum")
	require.Equal(t, "alice.near", out.Receipts[0].ReceiverID)
	require.Equal(t, ActionTransfer, out.Receipts[0].Actions[0].Kind)
	refund := new(big.Int).Sub(nearAmount(t, "1").Big(), minDeposit.Big())
	require.Equal(t, refund.String(), out.Receipts[0].Actions[0].Deposit.String())

	out = h.change("ft_transfer", "owner.near", map[string]string{"receiver_id": "alice.near", "amount": "1000"}, U128FromUint64(1))
	require.Len(t, out.Logs, 1)
	require.True(t, strings.HasPrefix(out.Logs[0], "EVENT_JSON:"), out.Logs[0])
	require.Contains(t, out.Logs[0], `"ft_transfer"`)

	h.viewEq("ft_balance_of", map[string]string{"account_id": "alice.near"}, `"1000"`)
	h.viewEq("ft_balance_of", map[string]string{"account_id": "owner.near"}, `"999000"`)
	h.viewEq("ft_balance_of", map[string]string{"account_id": "nobody.near"}, `"0"`)
	h.viewEq("ft_total_supply", map[string]any{}, `"1000000"`)
	h.viewEq("storage_balance_of", map[string]string{"account_id": "alice.near"},
		`{"total":"`+b.Min+`","available":"0"}`)
	h.viewEq("storage_balance_of", map[string]string{"account_id": "nobody.near"}, `null`)
	var meta map[string]any
	require.NoError(t, json.Unmarshal(h.view("ft_metadata", map[string]any{}), &meta))
	require.Equal(t, "ft-1.0.0", meta["spec"])
	require.Equal(t, "Example NEAR fungible token", meta["name"])
	require.Equal(t, "EXAMPLE", meta["symbol"])
	require.EqualValues(t, 24, meta["decimals"])
}

func TestStatusMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "status_message")
	h.viewEq("get_status", map[string]string{"account_id": "bob.near"}, `null`)
	out := h.change("set_status", "bob.near", map[string]string{"message": "hello"}, U128{})
	require.Equal(t, []string{"bob.near set_status with message hello"}, out.Logs)
	require.Equal(t, []Write{{Key: []byte("STATE"), Value: []byte("\x01\x00\x00\x00\x08\x00\x00\x00bob.near\x05\x00\x00\x00hello")}}, out.Writes)
	require.Equal(t, uint64(1000+5+25+storageRecordOverhead), out.StorageUsage)
	h.viewEq("get_status", map[string]string{"account_id": "bob.near"}, `"hello"`)
	h.viewEq("get_status", map[string]string{"account_id": "carol.near"}, `null`)
}

func TestGuestbookRS(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "guestbook_rs")
	h.viewEq("total_messages", nil, `0`)
	h.change("add_message", "alice.near", map[string]string{"text": "Hello, world!"}, U128{})
	h.change("add_message", "bob.near", map[string]string{"text": "second"}, nearAmount(t, "1"))
	h.viewEq("total_messages", nil, `2`)
	h.viewEq("get_messages", map[string]any{}, `[{"premium":false,"sender":"alice.near","text":"Hello, world!"},{"premium":true,"sender":"bob.near","text":"second"}]`)
	h.viewEq("get_messages", map[string]any{"from_index": "1", "limit": "1"}, `[{"premium":true,"sender":"bob.near","text":"second"}]`)
}

func TestGuestbookJS(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "guestbook_js")
	for _, kv := range h.f.State {
		h.st.data[string(kv.Key)] = kv.Value
	}
	h.account = h.f.ContractAccountID
	h.viewEq("total_messages", map[string]any{}, `2`)
	h.change("add_message", "carol.near", map[string]string{"text": "third"}, U128{})
	h.viewEq("total_messages", map[string]any{}, `3`)
	h.viewEq("get_messages", map[string]any{"from_index": 2, "limit": 1}, `[{"premium":false,"sender":"carol.near","text":"third"}]`)
}

func TestWrappedNear(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "w_near")
	h.change("new", "contract.near", map[string]any{}, U128{})
	var b struct{ Min string }
	require.NoError(t, json.Unmarshal(h.view("storage_balance_bounds", map[string]any{}), &b))
	minDeposit, err := ParseU128(b.Min)
	require.NoError(t, err)
	h.change("near_deposit", "alice.near", map[string]any{}, nearAmount(t, "5"))
	want := new(big.Int).Sub(nearAmount(t, "5").Big(), minDeposit.Big()).String()
	h.viewEq("ft_balance_of", map[string]string{"account_id": "alice.near"}, `"`+want+`"`)
	h.viewEq("ft_total_supply", map[string]any{}, `"`+want+`"`)
	h.viewEq("ft_balance_of", map[string]string{"account_id": "bob.near"}, `"0"`)
}

func TestStakingPool(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "staking_pool")
	stakeKey := "ed25519:" + strings.Repeat("1", 32) // base58 of 32 zero bytes
	out := h.change("new", "contract.near", map[string]any{
		"owner_id":            "owner.near",
		"stake_public_key":    stakeKey,
		"reward_fee_fraction": map[string]int{"numerator": 10, "denominator": 100},
	}, U128{})
	require.NotEmpty(t, out.Receipts, "new restakes through a promise")
	require.Equal(t, "contract.near", out.Receipts[0].ReceiverID)
	require.Equal(t, ActionStake, out.Receipts[0].Actions[0].Kind)
	require.Equal(t, append([]byte{0}, make([]byte, 32)...), out.Receipts[0].Actions[0].PublicKey)

	h.viewEq("get_owner_id", map[string]any{}, `"owner.near"`)
	h.viewEq("get_reward_fee_fraction", map[string]any{}, `{"numerator":10,"denominator":100}`)
	h.viewEq("get_staking_key", map[string]any{}, `"`+stakeKey+`"`)
	h.viewEq("is_staking_paused", map[string]any{}, `false`)
	h.viewEq("get_number_of_accounts", map[string]any{}, `0`)

	// The deposit is part of the balance the contract sees.
	h.balance = nearAmount(t, "110")
	h.change("deposit", "alice.near", map[string]any{}, nearAmount(t, "10"))
	ten := nearAmount(t, "10").String()
	h.viewEq("get_account_unstaked_balance", map[string]string{"account_id": "alice.near"}, `"`+ten+`"`)
	h.viewEq("get_account_total_balance", map[string]string{"account_id": "alice.near"}, `"`+ten+`"`)
	h.viewEq("get_account_staked_balance", map[string]string{"account_id": "alice.near"}, `"0"`)
	h.viewEq("get_number_of_accounts", map[string]any{}, `1`)
	h.viewEq("get_accounts", map[string]any{"from_index": 0, "limit": 10},
		`[{"account_id":"alice.near","unstaked_balance":"`+ten+`","staked_balance":"0","can_withdraw":true}]`)
}

func TestMultisig(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "multisig")
	h.change("new", "contract.near", map[string]any{"num_confirmations": 2}, U128{})
	h.viewEq("get_num_confirmations", map[string]any{}, `2`)
	h.viewEq("get_request_nonce", map[string]any{}, `0`)
	h.viewEq("list_request_ids", map[string]any{}, `[]`)

	request := map[string]any{"receiver_id": "bob.near", "actions": []any{map[string]string{"type": "Transfer", "amount": "1000"}}}
	out := h.change("add_request", "contract.near", map[string]any{"request": request}, U128{})
	require.Equal(t, "0", string(out.ReturnData))
	h.viewEq("get_request_nonce", map[string]any{}, `1`)
	h.viewEq("list_request_ids", map[string]any{}, `[0]`)
	h.viewEq("get_request", map[string]any{"request_id": 0}, `{"receiver_id":"bob.near","actions":[{"type":"Transfer","amount":"1000"}]}`)
	h.viewEq("get_confirmations", map[string]any{"request_id": 0}, `[]`)
}

func TestWhitelist(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "whitelist")
	h.change("new", "contract.near", map[string]string{"foundation_account_id": "foundation.near"}, U128{})
	h.viewEq("is_whitelisted", map[string]string{"staking_pool_account_id": "figment.poolv1.near"}, `false`)
	h.change("add_staking_pool", "foundation.near", map[string]string{"staking_pool_account_id": "figment.poolv1.near"}, U128{})
	h.change("add_factory", "foundation.near", map[string]string{"factory_account_id": "poolv1.near"}, U128{})
	h.viewEq("is_whitelisted", map[string]string{"staking_pool_account_id": "figment.poolv1.near"}, `true`)
	h.viewEq("is_whitelisted", map[string]string{"staking_pool_account_id": "other.poolv1.near"}, `false`)
	h.viewEq("is_factory_whitelisted", map[string]string{"factory_account_id": "poolv1.near"}, `true`)
}

func TestLockup(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "lockup_contract")
	const day = uint64(24 * 60 * 60 * 1_000_000_000)
	start := uint64(1_600_000_000_000_000_000)
	h.change("new", "contract.near", map[string]any{
		"owner_account_id":                  "owner.near",
		"lockup_duration":                   fmt.Sprint(365 * day),
		"lockup_timestamp":                  nil,
		"transfers_information":             map[string]any{"TransfersEnabled": map[string]string{"transfers_timestamp": fmt.Sprint(start)}},
		"vesting_schedule":                  nil,
		"release_duration":                  nil,
		"staking_pool_whitelist_account_id": "whitelist.near",
		"foundation_account_id":             nil,
	}, U128{})
	h.viewEq("get_owner_account_id", map[string]any{}, `"owner.near"`)
	h.viewEq("get_staking_pool_account_id", map[string]any{}, `null`)
	h.viewEq("get_known_deposited_balance", map[string]any{}, `"0"`)
	h.viewEq("are_transfers_enabled", map[string]any{}, `true`)
	h.viewEq("get_balance", map[string]any{}, `"`+h.balance.String()+`"`)

	// The locked amount follows the block timestamp the call sees.
	at := func(ts uint64) string {
		c := h.ctx(viewCtx(h.account, map[string]any{}))
		c.BlockTimestamp = ts
		out, err := h.r.Call(context.Background(), h.f.Code, "", "get_locked_amount", c, h.st)
		require.NoError(t, err)
		return string(out.ReturnData)
	}
	require.Equal(t, `"`+h.balance.String()+`"`, at(start+day))
	require.Equal(t, `"0"`, at(start+400*day))
}

func TestNonFungibleToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "non_fungible_token")
	h.change("new_default_meta", "owner.near", map[string]string{"owner_id": "owner.near"}, U128{})
	h.viewEq("nft_total_supply", map[string]any{}, `"0"`)
	out := h.change("nft_mint", "owner.near", map[string]any{
		"token_id": "0", "token_owner_id": "alice.near",
		"token_metadata": map[string]string{"title": "First", "description": "the first token"},
	}, nearAmount(t, "1"))
	require.NotEmpty(t, out.Logs, "NEP-171 mint event")
	require.Contains(t, out.Logs[0], `"nft_mint"`)
	require.Len(t, out.Receipts, 1, "storage refund")
	require.Equal(t, "owner.near", out.Receipts[0].ReceiverID)

	h.viewEq("nft_total_supply", map[string]any{}, `"1"`)
	h.viewEq("nft_supply_for_owner", map[string]string{"account_id": "alice.near"}, `"1"`)
	h.viewEq("nft_supply_for_owner", map[string]string{"account_id": "bob.near"}, `"0"`)
	var token struct {
		TokenID  string `json:"token_id"`
		OwnerID  string `json:"owner_id"`
		Metadata struct {
			Title string `json:"title"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(h.view("nft_token", map[string]string{"token_id": "0"}), &token))
	require.Equal(t, "0", token.TokenID)
	require.Equal(t, "alice.near", token.OwnerID)
	require.Equal(t, "First", token.Metadata.Title)
	h.viewEq("nft_token", map[string]string{"token_id": "1"}, `null`)
	var tokens []map[string]any
	require.NoError(t, json.Unmarshal(h.view("nft_tokens_for_owner", map[string]any{"account_id": "alice.near", "from_index": "0", "limit": 10}), &tokens))
	require.Len(t, tokens, 1)
	var meta map[string]any
	require.NoError(t, json.Unmarshal(h.view("nft_metadata", map[string]any{}), &meta))
	require.Equal(t, "nft-1.0.0", meta["spec"])
	require.Equal(t, "Example NEAR non-fungible token", meta["name"])
}
