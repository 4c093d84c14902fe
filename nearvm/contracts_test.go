package nearvm

import (
	"context"
	"encoding/json"
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
