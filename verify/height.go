package verify

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/nearline/nearline/near"
)

// heightSeen is what the archive answered about one height: its block,
// the chunks new in it, and the accounts it names.
type heightSeen struct {
	height   uint64
	block    *near.BlockView // nil for a height without a block
	touched  []string        // accounts with a state change, in the archive's order
	txs      []near.SignedTransactionView
	receipts []string
	accounts []string // every account the height names, for the pool
}

// see reads a height's block, its new chunks and its state changes from
// the archive.
func (p *planner) see(ctx context.Context, h uint64) (heightSeen, error) {
	s := heightSeen{height: h}
	var block near.BlockView
	ok, err := p.ask(ctx, "block", map[string]any{"block_id": h}, &block)
	if err != nil || !ok {
		return s, err
	}
	s.block = &block
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
		}
		for _, r := range chunk.Receipts {
			s.receipts = append(s.receipts, r.ReceiptID)
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

// requests builds a height's requests from what was seen there, querying
// accounts drawn from its touched accounts and from pool.
func (p *planner) requests(ctx context.Context, s heightSeen, pool []string) ([]Request, error) {
	h := s.height
	at := map[string]any{"block_id": h}
	rng := rand.New(rand.NewPCG(p.cfg.Seed, h))
	reqs := []Request{
		NewRequest("block", at),
		NewRequest("EXPERIMENTAL_changes_in_block", at),
		NewRequest("gas_price", []any{h}),
		NewRequest("EXPERIMENTAL_protocol_config", at),
	}
	if s.block == nil {
		reqs = append(reqs, NewRequest("chunk", map[string]any{"block_id": h, "shard_id": 0}))
		for _, a := range pick(rng, pool, 1) {
			reqs = append(reqs, NewRequest("query", map[string]any{"request_type": "view_account", "account_id": a, "block_id": h}))
		}
		return reqs, nil
	}
	hash := s.block.Header.Hash
	byHash := map[string]any{"block_id": hash}
	reqs = append(reqs,
		NewRequest("block", byHash),
		NewRequest("block_effects", byHash),
		NewRequest("gas_price", map[string]any{"block_id": hash}),
	)
	var maxShard uint64
	for _, c := range s.block.Chunks {
		maxShard = max(maxShard, c.ShardID)
		reqs = append(reqs,
			NewRequest("chunk", map[string]any{"block_id": h, "shard_id": c.ShardID}),
			NewRequest("chunk", map[string]any{"chunk_id": c.ChunkHash}),
			NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"block_id": hash, "shard_id": c.ShardID}),
			NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"chunk_id": c.ChunkHash}),
		)
	}
	reqs = append(reqs,
		NewRequest("chunk", map[string]any{"block_id": h, "shard_id": maxShard + 1}),
		NewRequest("EXPERIMENTAL_congestion_level", map[string]any{"block_id": h, "shard_id": maxShard + 1}),
	)
	for _, tx := range pick(rng, s.txs, p.cfg.TxsPerHeight) {
		reqs = append(reqs,
			NewRequest("tx", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID}),
			NewRequest("EXPERIMENTAL_tx_status", map[string]any{"tx_hash": tx.Hash, "sender_account_id": tx.SignerID, "wait_until": "FINAL"}),
		)
	}
	for _, id := range pick(rng, s.receipts, p.cfg.TxsPerHeight) {
		reqs = append(reqs,
			NewRequest("EXPERIMENTAL_receipt", map[string]any{"receipt_id": id}),
			NewRequest("EXPERIMENTAL_receipt_to_tx", map[string]any{"receipt_id": id}),
		)
	}

	touched := pick(rng, s.touched, p.cfg.AccountsPerHeight)
	others := slices.DeleteFunc(slices.Clone(pool), func(a string) bool { return slices.Contains(touched, a) })
	accounts := append(slices.Clone(touched), pick(rng, others, max(1, p.cfg.AccountsPerHeight/2))...)
	keys := map[string][]string{}
	for _, a := range accounts {
		more, accountKeys, err := p.accountRequests(ctx, rng, h, a, accounts)
		if err != nil {
			return nil, err
		}
		keys[a] = accountKeys
		reqs = append(reqs, more...)
	}
	if len(touched) > 0 {
		ids := slices.Sorted(slices.Values(touched))
		var single []map[string]string
		for _, a := range ids {
			for _, k := range keys[a] {
				single = append(single, map[string]string{"account_id": a, "public_key": k})
			}
		}
		reqs = append(reqs,
			NewRequest("changes", map[string]any{"changes_type": "account_changes", "account_ids": ids, "block_id": h}),
			NewRequest("EXPERIMENTAL_changes", map[string]any{"changes_type": "account_changes", "account_ids": ids, "block_id": hash}),
			NewRequest("EXPERIMENTAL_changes", map[string]any{"changes_type": "all_access_key_changes", "account_ids": ids, "block_id": h}),
			NewRequest("changes", map[string]any{"changes_type": "contract_code_changes", "account_ids": ids, "block_id": h}),
			NewRequest("EXPERIMENTAL_changes", map[string]any{"changes_type": "data_changes", "account_ids": ids, "key_prefix_base64": "", "block_id": h}),
		)
		if len(single) > 0 {
			reqs = append(reqs, NewRequest("changes", map[string]any{"changes_type": "single_access_key_changes", "keys": single, "block_id": h}))
		}
	}
	return reqs, nil
}
