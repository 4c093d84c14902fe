package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
)

// earliest returns the lowest height the node still serves.
func (c *chain) earliest() uint64 {
	h := c.head()
	if c.cfg.GCWindow == 0 || h == nil || h.height < c.cfg.GenesisHeight+c.cfg.GCWindow {
		return c.cfg.GenesisHeight
	}
	return h.height - c.cfg.GCWindow
}

func (c *chain) gcd(height uint64) bool { return height < c.earliest() }

// byFinality selects the block a finality names. With FinalityLag 0 every
// block is final at once. Otherwise `final` is the block FinalityLag blocks
// before the head and `near-final` the one before the head, as doomslug
// finality does, until production is over: then the tip is final.
func (c *chain) byFinality(finality string) *block {
	n := len(c.blocks)
	lag := int(c.cfg.FinalityLag)
	done := c.cfg.MaxHeight != 0 && c.next > c.cfg.MaxHeight
	if lag == 0 || done || n == 0 {
		return c.head()
	}
	switch finality {
	case near.FinalityFinal:
	case near.FinalityNearFinal:
		lag = min(lag, 1)
	default:
		lag = 0
	}
	return c.blocks[max(n-1-lag, 0)]
}

// lookup finds the block ref names; gc tells whether it has been garbage
// collected. A nil block with a nil error means "no such block".
func (c *chain) lookup(ref near.BlockReference) (b *block, gc bool) {
	switch {
	case ref.BlockID != nil && ref.BlockID.IsHeight():
		b = c.byHeight[ref.BlockID.Height]
	case ref.BlockID != nil:
		b = c.byHash[ref.BlockID.Hash]
	case ref.SyncCheckpoint == "genesis":
		b = c.byHeight[c.cfg.GenesisHeight]
	case ref.SyncCheckpoint == "earliest_available":
		for h := c.earliest(); h <= c.head().height; h++ {
			if b = c.byHeight[h]; b != nil {
				break
			}
		}
		return b, false
	default:
		b = c.byFinality(ref.Finality)
	}
	if b == nil {
		return nil, false
	}
	return b, c.gcd(b.height)
}

// blockFor resolves ref for the block-level methods: UNKNOWN_BLOCK for a
// block nobody has or a garbage-collected one.
func (c *chain) blockFor(ref near.BlockReference) (*block, error) {
	if c.head() == nil {
		return nil, near.NotSyncedYet()
	}
	b, gc := c.lookup(ref)
	if b == nil || gc {
		id := near.HeightID(0)
		if ref.BlockID != nil {
			id = *ref.BlockID
		} else if b != nil {
			id = near.HeightID(b.height)
		}
		return nil, near.UnknownBlock(id)
	}
	return b, nil
}

func stamp(b *block) near.BlockStamp {
	return near.BlockStamp{BlockHeight: b.height, BlockHash: b.hash}
}

// Block answers `block`.
func (n *Node) Block(_ context.Context, ref near.BlockReference) (json.RawMessage, error) {
	return readView(n, n.chain.blockFor, ref, func(b *block) (json.RawMessage, error) { return b.json, nil })
}

// Chunk answers `chunk`.
func (n *Node) Chunk(_ context.Context, req near.ChunkRequest) (json.RawMessage, error) {
	return readView(n, n.chain.chunkFor, req, func(ch *chunk) (json.RawMessage, error) { return ch.json, nil })
}

// readView returns view of what find selects by key (a block, a chunk),
// both run under the node's read lock.
func readView[K, S, T any](n *Node, find func(K) (S, error), key K, view func(S) (T, error)) (T, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	s, err := find(key)
	if err != nil {
		var none T
		return none, err
	}
	return view(s)
}

// chunkFor finds the chunk req selects: by hash, or the one a block carries
// for a shard (for a missing chunk, the older chunk it repeats).
func (c *chain) chunkFor(req near.ChunkRequest) (*chunk, error) {
	hash := req.ChunkID
	if req.BlockID != nil {
		b, err := c.blockFor(near.BlockReference{BlockID: req.BlockID})
		if err != nil {
			return nil, err
		}
		// The shard id names an index of the block's layout; the chunk
		// header there may name another shard (a child's missing chunk
		// repeats its parent's), as in nearcore.
		s, ok := c.layoutAt(b.height).indexOf(req.ShardID)
		if !ok {
			return nil, near.InvalidShardID(req.ShardID)
		}
		hash = b.view.Chunks[s].ChunkHash
	} else if c.head() == nil {
		return nil, near.NotSyncedYet()
	}
	ch := c.chunks[hash]
	if ch == nil || c.gcd(ch.height) {
		return nil, near.UnknownChunk(hash)
	}
	return ch, nil
}

// BlockEffects answers `block_effects` / `EXPERIMENTAL_changes_in_block`.
func (n *Node) BlockEffects(_ context.Context, ref near.BlockReference) (*near.BlockEffectsView, error) {
	return readView(n, n.chain.blockFor, ref, func(b *block) (*near.BlockEffectsView, error) {
		return &near.BlockEffectsView{BlockHash: b.hash, Changes: b.effects}, nil
	})
}

// Changes answers `changes` / `EXPERIMENTAL_changes`: for each requested
// account (or key) in request order, its matching changes in trie key order.
func (n *Node) Changes(_ context.Context, req near.ChangesRequest) (*near.ChangesView, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	b, err := n.chain.blockFor(req.Block)
	if err != nil {
		return nil, err
	}
	out := []near.StateChangeWithCauseView{}
	match := func(want func(ch change) bool) {
		for _, ch := range b.changes {
			if want(ch) {
				out = append(out, ch.view)
			}
		}
	}
	switch req.ChangesType {
	case near.ChangesSingleAccessKey:
		for _, k := range req.Keys {
			tk := keyTrieKey(k.AccountID, k.PublicKey)
			match(func(ch change) bool { return ch.trieKey == tk })
		}
	default:
		col := map[string]string{
			near.ChangesAccount: colAccount, near.ChangesAllAccessKey: colAccessKey,
			near.ChangesContractCode: colContractCode, near.ChangesData: colContractData,
		}[req.ChangesType]
		for _, id := range req.AccountIDs {
			prefix := col + id
			switch req.ChangesType {
			case near.ChangesAllAccessKey:
				prefix += colAccessKey
			case near.ChangesData:
				prefix += "," + string(req.KeyPrefix)
			}
			exact := req.ChangesType == near.ChangesAccount || req.ChangesType == near.ChangesContractCode
			match(func(ch change) bool {
				if exact {
					return ch.trieKey == prefix
				}
				return len(ch.trieKey) >= len(prefix) && ch.trieKey[:len(prefix)] == prefix
			})
		}
	}
	return &near.ChangesView{BlockHash: b.hash, Changes: out}, nil
}

// Query answers `query`.
func (n *Node) Query(ctx context.Context, req near.QueryRequest) (any, error) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	c := n.chain
	if c.head() == nil {
		return nil, near.NoSyncedBlocks()
	}
	b, gc := c.lookup(req.Block)
	if b == nil {
		return nil, near.QueryUnknownBlock(req.Block)
	}
	at := stamp(b)
	if gc {
		return nil, near.GarbageCollectedBlock(at)
	}
	h, id := b.height, req.AccountID
	switch req.RequestType {
	case near.QueryViewAccount:
		acc := c.st.accountAt(id, h)
		if acc == nil {
			return nil, near.UnknownAccount(id, at)
		}
		return near.AccountView{Account: *acc, BlockStamp: at}, nil
	case near.QueryViewCode:
		if c.st.accountAt(id, h) == nil {
			return nil, near.UnknownAccount(id, at)
		}
		code, hash := c.contractAt(id, h)
		if code == nil {
			return nil, near.NoContractCode(id, at)
		}
		return near.ContractCodeView{CodeBase64: code, Hash: hash, BlockStamp: at}, nil
	case near.QueryViewGlobalContractCode, near.QueryViewGlobalContractCodeByAccountID:
		gid := near.GlobalContractID{CodeHash: req.CodeHash, AccountID: req.AccountID}
		// nearcore reads global code on the first shard of the layout.
		code, hash := c.st.globalAt(c.layoutAt(h).ids[0], gid, h)
		if code == nil {
			return nil, near.NoGlobalContractCode(gid, at)
		}
		return near.ContractCodeView{CodeBase64: code, Hash: hash, BlockStamp: at}, nil
	case near.QueryViewState:
		if c.st.accountAt(id, h) == nil {
			return nil, near.UnknownAccount(id, at)
		}
		if limit := c.cfg.ViewStateLimit; limit > 0 {
			acc := c.st.accountAt(id, h)
			code, _ := c.st.codeAt(id, h)
			usage := acc.StorageUsage - min(acc.StorageUsage, uint64(len(code)))
			if usage > uint64(limit) {
				return nil, near.TooLargeContractState(id, at)
			}
		}
		items := c.st.stateAt(id, req.Prefix, h)
		if items == nil {
			items = []near.StateItem{}
		}
		return near.ViewStateResult{Values: items, BlockStamp: at}, nil
	case near.QueryViewAccessKey:
		k := c.st.keyAt(id, req.PublicKey, h)
		if k == nil {
			return nil, near.UnknownAccessKey(req.PublicKey, at)
		}
		return near.AccessKeyResult{AccessKeyView: *k, BlockStamp: at}, nil
	case near.QueryViewAccessKeyList:
		keys := c.st.keysAt(id, h)
		if keys == nil {
			keys = []near.AccessKeyInfoView{}
		}
		return near.AccessKeyListView{Keys: keys, BlockStamp: at}, nil
	case near.QueryCallFunction:
		if c.st.accountAt(id, h) == nil {
			return nil, near.UnknownAccount(id, at)
		}
		if code, _ := c.contractAt(id, h); code == nil || c.vm == nil {
			return nil, near.CodeDoesNotExist(id, at)
		}
		out, err := c.viewCall(ctx, id, req.MethodName, req.Args, h)
		var fce *nearvm.FunctionCallError
		if errors.As(err, &fce) {
			return nil, near.NewContractError(fce, at)
		}
		if err != nil {
			return nil, fmt.Errorf("view call %s.%s: %w", id, req.MethodName, err)
		}
		logs := out.Logs
		if logs == nil {
			logs = []string{}
		}
		return near.CallResult{Result: near.ByteArray(out.ReturnData), Logs: logs, BlockStamp: at}, nil
	}
	return nil, near.ParseError("Failed parsing args: unknown request type " + req.RequestType)
}

// GasPrice answers `gas_price`.
func (n *Node) GasPrice(_ context.Context, id *near.BlockID) (*near.GasPriceView, error) {
	ref := near.BlockReference{Finality: near.FinalityOptimistic} // null: the latest block
	if id != nil {
		ref = near.BlockReference{BlockID: id}
	}
	return readView(n, n.chain.blockFor, ref, func(b *block) (*near.GasPriceView, error) {
		return &near.GasPriceView{GasPrice: b.view.Header.GasPrice}, nil
	})
}

// GenesisConfig answers `genesis_config`.
func (n *Node) GenesisConfig(context.Context) (json.RawMessage, error) {
	b, err := json.Marshal(n.chain.genesis)
	if err != nil {
		return nil, fmt.Errorf("encode genesis config: %w", err)
	}
	return b, nil
}

// ProtocolConfig answers `EXPERIMENTAL_protocol_config`.
func (n *Node) ProtocolConfig(_ context.Context, ref near.BlockReference) (json.RawMessage, error) {
	return readView(n, n.chain.blockFor, ref, func(b *block) (json.RawMessage, error) {
		return n.chain.layoutAt(b.height).config, nil
	})
}
