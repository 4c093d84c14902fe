package verify

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/nearline/nearline/near"
)

// heightSeen is what the archive answered about one height: its block,
// the chunks new in it, and the accounts it names.
type heightSeen struct {
	height   uint64
	block    *near.BlockView // nil for a height without a block
	layout   []uint64        // the shard ids of the height's layout
	touched  []string        // accounts with a state change, in the archive's order
	txs      []near.SignedTransactionView
	receipts []near.ReceiptView
	accounts []string // every account the height names, for the pool
	// globalUsers are the accounts the height's transactions told to use
	// a global contract.
	globalUsers []string
}

// chainSeen is what the plan's heights saw together: what every height
// asks about, whether it existed there or not.
type chainSeen struct {
	// accounts is the pool: every account a sampled height names.
	accounts []string
	// shardIDs are the shard ids any sampled layout or chunk header named:
	// a split shard's id is refused after its split, a child's answered
	// with its parent's chunk while it has none of its own.
	shardIDs []uint64
	// globals are the global contracts the sampled chunks distributed.
	globals []near.GlobalContractID
	// globalUsers are the accounts the sampled transactions told to use a
	// global contract: asked about at every height, as their code changes
	// when a redeploy reaches their shard, with no change of their own.
	globalUsers []string
}

func newChainSeen(seen []heightSeen) (*chainSeen, error) {
	accounts, shards, users := map[string]bool{}, map[uint64]bool{}, map[string]bool{}
	globals := map[string]near.GlobalContractID{}
	for _, s := range seen {
		for _, a := range s.accounts {
			accounts[a] = true
		}
		for _, a := range s.globalUsers {
			users[a] = true
		}
		for _, id := range s.layout {
			shards[id] = true
		}
		if s.block != nil {
			for _, c := range s.block.Chunks {
				shards[c.ShardID] = true
			}
		}
		for _, r := range s.receipts {
			d, ok, err := r.Receipt.GlobalDistribution()
			if err != nil {
				return nil, fmt.Errorf("receipt %s: %w", r.ReceiptID, err)
			}
			if ok {
				globals[d.ID.Kind()+":"+d.ID.Value()] = d.ID
			}
		}
	}
	c := &chainSeen{accounts: slices.Sorted(maps.Keys(accounts)), shardIDs: slices.Sorted(maps.Keys(shards)),
		globalUsers: slices.Sorted(maps.Keys(users))}
	for _, k := range slices.Sorted(maps.Keys(globals)) {
		c.globals = append(c.globals, globals[k])
	}
	return c, nil
}

// see reads a height's block, its layout, its new chunks and its state
// changes from the archive.
func (p *planner) see(ctx context.Context, h uint64) (heightSeen, error) {
	s := heightSeen{height: h}
	var block near.BlockView
	ok, err := p.ask(ctx, "block", map[string]any{"block_id": h}, &block)
	if err != nil || !ok {
		return s, err
	}
	s.block = &block
	var protocol struct {
		ShardLayout near.ShardLayout `json:"shard_layout"`
	}
	if _, err := p.ask(ctx, "EXPERIMENTAL_protocol_config", map[string]any{"block_id": h}, &protocol); err != nil {
		return s, err
	}
	s.layout = protocol.ShardLayout.ShardIDs()
	names := map[string]bool{}
	name := func(a string) {
		if a != "" && !names[a] {
			names[a] = true
			s.accounts = append(s.accounts, a)
		}
	}
	name(block.Author)
	for _, c := range block.Chunks {
		if c.HeightIncluded != h {
			continue // a missing chunk: the shard's previous one repeated
		}
		var chunk near.ChunkView
		ok, err := p.ask(ctx, "chunk", map[string]any{"chunk_id": c.ChunkHash}, &chunk)
		if err != nil {
			return s, err
		}
		if !ok {
			continue
		}
		name(chunk.Author)
		for _, tx := range chunk.Transactions {
			s.txs = append(s.txs, tx)
			name(tx.SignerID)
			name(tx.ReceiverID)
			if slices.ContainsFunc(tx.Actions, func(a near.ActionView) bool {
				return a.UseGlobalContract != nil || a.UseGlobalContractByAccountID != nil
			}) {
				s.globalUsers = append(s.globalUsers, tx.ReceiverID)
			}
		}
		for _, r := range chunk.Receipts {
			s.receipts = append(s.receipts, r)
			name(r.PredecessorID)
			name(r.ReceiverID)
		}
	}
	var effects near.BlockEffectsView
	if _, err := p.ask(ctx, "EXPERIMENTAL_changes_in_block", map[string]any{"block_id": h}, &effects); err != nil {
		return s, err
	}
	touched := map[string]bool{}
	for _, c := range effects.Changes {
		if !touched[c.AccountID] {
			touched[c.AccountID] = true
			s.touched = append(s.touched, c.AccountID)
		}
		name(c.AccountID)
	}
	return s, nil
}

// requests builds a height's requests from what was seen there and in the
// whole sample, querying accounts drawn from its touched accounts and from
// the pool (all of the pool when everyAccount).
func (p *planner) requests(ctx context.Context, s heightSeen, chain *chainSeen, everyAccount bool) ([]Request, error) {
	h := s.height
	at := map[string]any{"block_id": h}
	rng := rand.New(rand.NewPCG(p.cfg.Seed, h))
	reqs := []Request{
		NewRequest("block", at),
		NewRequest("block_effects", at),
		NewRequest("EXPERIMENTAL_changes_in_block", at),
		NewRequest("gas_price", []any{h}),
		NewRequest("gas_price", at),
		NewRequest("EXPERIMENTAL_protocol_config", at),
	}
	if s.block == nil {
		reqs = append(reqs,
			NewRequest("chunk", map[string]any{"block_id": h, "shard_id": 0}),
			NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"block_id": h, "shard_id": 0}))
		for _, a := range pick(rng, chain.accounts, 1) {
			reqs = append(reqs, NewRequest("query", map[string]any{"request_type": "view_account", "account_id": a, "block_id": h}))
		}
		return reqs, nil
	}
	hash := s.block.Header.Hash
	byHash := map[string]any{"block_id": hash}
	reqs = append(reqs,
		NewRequest("block", byHash),
		NewRequest("block_effects", byHash),
		NewRequest("gas_price", byHash),
	)
	reqs = append(reqs, shardRequests(h, hash, s.block.Chunks, chain.shardIDs)...)
	for i, tx := range pick(rng, s.txs, p.cfg.TxsPerHeight) {
		reqs = append(reqs,
			NewRequest("tx", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID}),
			NewRequest("EXPERIMENTAL_tx_status", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID, "wait_until": "FINAL"}),
		)
		if i == 0 { // the positional forms, once a height
			reqs = append(reqs, NewRequest("tx", []any{tx.Hash, tx.SignerID}), NewRequest("EXPERIMENTAL_tx_status", []any{tx.Hash, tx.SignerID}))
		}
	}
	for _, r := range pick(rng, s.receipts, p.cfg.TxsPerHeight) {
		reqs = append(reqs,
			NewRequest("EXPERIMENTAL_receipt", map[string]any{"receipt_id": r.ReceiptID}),
			NewRequest("EXPERIMENTAL_receipt_to_tx", map[string]any{"receipt_id": r.ReceiptID}),
		)
	}
	for _, id := range chain.globals {
		reqs = append(reqs, globalCodeRequest(id, h))
	}

	asked := pick(rng, s.touched, p.cfg.AccountsPerHeight)
	for _, a := range chain.globalUsers {
		if !slices.Contains(asked, a) {
			asked = append(asked, a)
		}
	}
	others := slices.DeleteFunc(slices.Clone(chain.accounts), func(a string) bool { return slices.Contains(asked, a) })
	if !everyAccount {
		others = pick(rng, others, p.cfg.OtherAccounts)
	}
	accounts := append(asked, others...)
	keys := map[string][]string{}
	var once onceAHeight
	for i, a := range accounts {
		more, accountKeys, err := p.accountRequests(ctx, rng, h, a, accounts, &once)
		if err != nil {
			return nil, err
		}
		keys[a] = accountKeys
		reqs = append(reqs, more...)
		if i == 0 { // a key the account does not have, once a height
			reqs = append(reqs, NewRequest("query", map[string]any{"request_type": "view_access_key", "account_id": a,
				"public_key": unknownKey, "block_id": h}))
		}
	}
	changed := slices.Clone(accounts)
	for _, a := range s.touched {
		if !slices.Contains(changed, a) {
			changed = append(changed, a)
		}
	}
	return append(reqs, changesRequests(h, hash, changed, keys)...), nil
}

// shardRequests asks a block's chunks and congestion levels: by height
// and by hash for every shard id of ids, by block hash and by chunk hash
// for each of the block's chunks, and for a shard id no layout has.
func shardRequests(h uint64, hash string, chunks []near.ChunkHeaderView, ids []uint64) []Request {
	var reqs []Request
	for _, id := range ids {
		reqs = append(reqs,
			NewRequest("chunk", map[string]any{"block_id": h, "shard_id": id}),
			NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"block_id": h, "shard_id": id}),
			NewRequest("EXPERIMENTAL_congestion_level", []any{[]any{hash, id}}),
		)
	}
	for _, c := range chunks {
		reqs = append(reqs,
			NewRequest("chunk", map[string]any{"block_id": hash, "shard_id": c.ShardID}),
			NewRequest("chunk", map[string]any{"chunk_id": c.ChunkHash}),
			NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"block_id": hash, "shard_id": c.ShardID}),
			NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": c.ChunkHash}),
		)
	}
	unknown := uint64(len(chunks))
	if len(ids) > 0 {
		unknown = max(unknown, ids[len(ids)-1]+1)
	}
	return append(reqs,
		NewRequest("chunk", map[string]any{"block_id": h, "shard_id": unknown}),
		NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"block_id": h, "shard_id": unknown}),
	)
}

// changesRequests asks the changes of accounts at a height (every account
// it touched, and those asked about, which may have none), and of the keys
// asked about.
func changesRequests(h uint64, hash string, accounts []string, keys map[string][]string) []Request {
	if len(accounts) == 0 {
		return nil
	}
	ids := slices.Sorted(slices.Values(accounts))
	var single []map[string]string
	for _, a := range ids {
		for _, k := range keys[a] {
			single = append(single, map[string]string{"account_id": a, "public_key": k})
		}
	}
	reqs := []Request{
		NewRequest("changes", map[string]any{"changes_type": "account_changes", "account_ids": ids, "block_id": h}),
		NewRequest("EXPERIMENTAL_changes", map[string]any{"changes_type": "account_changes", "account_ids": ids, "block_id": hash}),
		NewRequest("EXPERIMENTAL_changes", map[string]any{"changes_type": "all_access_key_changes", "account_ids": ids, "block_id": h}),
		NewRequest("changes", map[string]any{"changes_type": "contract_code_changes", "account_ids": ids, "block_id": h}),
		NewRequest("EXPERIMENTAL_changes", map[string]any{"changes_type": "data_changes", "account_ids": ids, "key_prefix_base64": "", "block_id": h}),
	}
	if len(single) > 0 {
		reqs = append(reqs, NewRequest("changes", map[string]any{"changes_type": "single_access_key_changes", "keys": single, "block_id": h}))
	}
	return reqs
}

// globalCodeRequest asks a global contract's code at a height.
func globalCodeRequest(id near.GlobalContractID, h uint64) Request {
	if id.ByAccount() {
		return NewRequest("query", map[string]any{"request_type": "view_global_contract_code_by_account_id", "account_id": id.AccountID, "block_id": h})
	}
	return NewRequest("query", map[string]any{"request_type": "view_global_contract_code", "code_hash": id.CodeHash, "block_id": h})
}
