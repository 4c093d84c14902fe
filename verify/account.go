package verify

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
)

// noCode is the code hash of an account without a contract of its own.
const noCode = "11111111111111111111111111111111"

// unknownKey is a well-formed public key no account has (the bytes of
// sha256("nearline verify: nobody's key")): asked of an account, it is
// refused as an unknown access key.
const unknownKey = "ed25519:GX61HE8BKR9NbmsU3E2KMoyPwzJMb9SnY5N7FsUVswnQ"

// Call is a view call to ask of a contract: its method and arguments.
type Call struct {
	Method string
	Args   []byte
}

// onceAHeight notes the requests asked of one account a height, not of
// each: they would get the same refusals again.
type onceAHeight struct {
	missingAccount bool // everything about an account missing at h
	refusedCalls   bool // PlanConfig.Edges's refused calls of a contract
}

// accountRequests are the queries about one account at height h, and the
// public keys asked about (to ask their changes too). call_function args
// name an account of others, as most view methods that take one want.
// once says what was asked of another account at h already.
func (p *planner) accountRequests(ctx context.Context, rng *rand.Rand, h uint64, account string, others []string, once *onceAHeight) ([]Request, []string, error) {
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
	if err != nil {
		return nil, nil, err
	}
	if !exists {
		// Of accounts not there at h, the first is asked everything, the
		// others only view_account: the same refusals again.
		if once.missingAccount {
			reqs = reqs[:1]
		}
		once.missingAccount = true
		return reqs, nil, nil
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
		reqs = append(reqs, globalCodeRequest(near.GlobalContractID{CodeHash: *view.GlobalHash}, h))
	}
	if view.GlobalAccountID != nil {
		reqs = append(reqs, globalCodeRequest(near.GlobalContractID{AccountID: *view.GlobalAccountID}, h))
	}
	if view.CodeHash == noCode && view.GlobalHash == nil && view.GlobalAccountID == nil {
		return reqs, keys, nil
	}
	known := view.CodeHash // the code's hash, when the account runs its own or global code by hash
	if view.GlobalHash != nil {
		known = *view.GlobalHash
	}
	if view.GlobalAccountID != nil {
		known = "" // the code of whatever the account id deployed last
	}
	codeHash, methods, err := p.contractMethods(ctx, h, account, known)
	if err != nil {
		return nil, nil, err
	}
	arg := account
	if picked := pick(rng, others, 1); len(picked) > 0 {
		arg = picked[0]
	}
	guessed, err := json.Marshal(map[string]string{"account_id": arg})
	if err != nil {
		return nil, nil, err
	}
	views, changers := splitExports(methods)
	calls := p.cfg.Calls[codeHash]
	if len(calls) == 0 {
		for _, m := range chooseCalls(views, changers, p.cfg.CallsPerContract) {
			calls = append(calls, Call{Method: m, Args: guessed})
		}
	}
	calls = pick(rng, calls, p.cfg.CallsPerContract)
	if p.cfg.Edges && !once.refusedCalls {
		// A method the code does not export, and one that changes state,
		// called as views: both refused.
		calls = append(calls, Call{Method: "no_such_method", Args: []byte("{}")})
		if len(changers) > 0 {
			calls = append(calls, Call{Method: changers[rng.IntN(len(changers))], Args: guessed})
		}
		once.refusedCalls = true
	}
	for _, c := range calls {
		reqs = append(reqs, q("call_function", "method_name", c.Method, "args_base64", base64.StdEncoding.EncodeToString(c.Args)))
	}
	return reqs, keys, nil
}

// contractMethods returns the hash of the code the account runs at h and
// the functions it exports (none when the archive does not answer its
// code), read once per code hash: codeHash, when known, saves reading the
// code of an account whose code was read before.
func (p *planner) contractMethods(ctx context.Context, h uint64, account, codeHash string) (string, []string, error) {
	if codeHash != "" {
		p.mu.Lock()
		methods, seen := p.exports[codeHash]
		p.mu.Unlock()
		if seen {
			return codeHash, methods, nil
		}
	}
	var code struct {
		Hash string `json:"hash"`
		Code string `json:"code_base64"`
	}
	ok, err := p.ask(ctx, "query", map[string]any{"request_type": "view_code", "account_id": account, "block_id": h}, &code)
	if err != nil || !ok {
		return "", nil, err
	}
	p.mu.Lock()
	methods, seen := p.exports[code.Hash]
	p.mu.Unlock()
	if seen {
		return code.Hash, methods, nil
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
	return code.Hash, methods, nil
}

// viewPrefixes mark exported functions that look like view methods.
var viewPrefixes = []string{"get", "view", "is_", "has_", "total", "ft_balance_of", "ft_total_supply", "ft_metadata",
	"nft_token", "nft_total_supply", "nft_supply", "nft_metadata", "storage_balance", "version", "owner", "metadata"}

// splitExports parts a contract's exported functions into those that
// look like view methods and the others, each in export order, leaving out
// the hidden ones ("__contract_abi").
func splitExports(exports []string) (views, others []string) {
	for _, name := range exports {
		if strings.HasPrefix(name, "__") {
			continue
		}
		if slices.ContainsFunc(viewPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			views = append(views, name)
		} else {
			others = append(others, name)
		}
	}
	return views, others
}

// chooseCalls returns up to n of a contract's functions to call: the
// view-like ones, in export order; with none of those, up to two others
// (their failure to run in a view is compared too).
func chooseCalls(views, others []string, n int) []string {
	if len(views) == 0 {
		return others[:min(len(others), 2, n)]
	}
	return views[:min(len(views), n)]
}
