package verify

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"

	"github.com/nearline/nearline/nearvm"
)

// noCode is the code hash of an account without a contract of its own.
const noCode = "11111111111111111111111111111111"

// accountRequests are the queries about one account at height h, and the
// public keys asked about (to ask their changes too). call_function args
// name an account of others, as most view methods that take one want.
func (p *planner) accountRequests(ctx context.Context, rng *rand.Rand, h uint64, account string, others []string) ([]Request, []string, error) {
	q := func(requestType string, kv ...any) Request {
		params := map[string]any{"request_type": requestType, "account_id": account, "block_id": h}
		for i := 0; i+1 < len(kv); i += 2 {
			params[kv[i].(string)] = kv[i+1]
		}
		return NewRequest("query", params)
	}
	reqs := []Request{
		q("view_account"),
		q("view_code"),
		q("view_state", "prefix_base64", ""),
		q("view_access_key_list"),
	}
	var view struct {
		CodeHash        string  `json:"code_hash"`
		GlobalHash      *string `json:"global_contract_hash"`
		GlobalAccountID *string `json:"global_contract_account_id"`
	}
	exists, err := p.ask(ctx, "query", map[string]any{"request_type": "view_account", "account_id": account, "block_id": h}, &view)
	if err != nil || !exists {
		return reqs, nil, err
	}
	var list struct {
		Keys []struct {
			PublicKey string `json:"public_key"`
		} `json:"keys"`
	}
	if _, err := p.ask(ctx, "query", map[string]any{"request_type": "view_access_key_list", "account_id": account, "block_id": h}, &list); err != nil {
		return nil, nil, err
	}
	var keys []string
	for _, k := range pick(rng, list.Keys, p.cfg.KeysPerAccount) {
		keys = append(keys, k.PublicKey)
		reqs = append(reqs, q("view_access_key", "public_key", k.PublicKey))
	}
	if view.GlobalHash != nil {
		reqs = append(reqs, NewRequest("query", map[string]any{"request_type": "view_global_contract_code", "code_hash": *view.GlobalHash, "block_id": h}))
	}
	if view.GlobalAccountID != nil {
		reqs = append(reqs, NewRequest("query", map[string]any{"request_type": "view_global_contract_code_by_account_id", "account_id": *view.GlobalAccountID, "block_id": h}))
	}
	if view.CodeHash == noCode && view.GlobalHash == nil && view.GlobalAccountID == nil {
		return reqs, keys, nil
	}
	methods, err := p.contractMethods(ctx, h, account)
	if err != nil {
		return nil, nil, err
	}
	arg := account
	if picked := pick(rng, others, 1); len(picked) > 0 {
		arg = picked[0]
	}
	args, err := json.Marshal(map[string]string{"account_id": arg})
	if err != nil {
		return nil, nil, err
	}
	for _, m := range chooseCalls(methods, p.cfg.CallsPerContract) {
		reqs = append(reqs, q("call_function", "method_name", m, "args_base64", base64.StdEncoding.EncodeToString(args)))
	}
	return reqs, keys, nil
}

// contractMethods returns the functions the account's contract at h
// exports (none when the archive does not answer its code), read once per
// code hash.
func (p *planner) contractMethods(ctx context.Context, h uint64, account string) ([]string, error) {
	var code struct {
		Hash string `json:"hash"`
		Code string `json:"code_base64"`
	}
	ok, err := p.ask(ctx, "query", map[string]any{"request_type": "view_code", "account_id": account, "block_id": h}, &code)
	if err != nil || !ok {
		return nil, err
	}
	p.mu.Lock()
	methods, seen := p.exports[code.Hash]
	p.mu.Unlock()
	if seen {
		return methods, nil
	}
	wasm, err := base64.StdEncoding.DecodeString(code.Code)
	if err == nil {
		methods, err = nearvm.ExportedFunctions(wasm)
	}
	if err != nil {
		p.logger.Warn("contract code has no readable exports; no call_function asked", "account_id", account, "code_hash", code.Hash, "err", err)
	}
	p.mu.Lock()
	p.exports[code.Hash] = methods
	p.mu.Unlock()
	return methods, nil
}

// viewPrefixes mark exported functions that look like view methods.
var viewPrefixes = []string{"get", "view", "is_", "has_", "total", "ft_balance_of", "ft_total_supply", "ft_metadata",
	"nft_token", "nft_total_supply", "nft_supply", "nft_metadata", "storage_balance", "version", "owner", "metadata"}

// chooseCalls returns up to n of an contract's exported functions to call:
// those that look like view methods, in export order; with none of those,
// up to two others (their failure to run in a view is compared too).
func chooseCalls(exports []string, n int) []string {
	var views, others []string
	for _, name := range exports {
		if strings.HasPrefix(name, "__") {
			continue
		}
		isView := false
		for _, p := range viewPrefixes {
			if strings.HasPrefix(name, p) {
				isView = true
				break
			}
		}
		if isView {
			views = append(views, name)
		} else {
			others = append(others, name)
		}
	}
	if len(views) == 0 {
		return others[:min(len(others), 2, n)]
	}
	return views[:min(len(views), n)]
}
