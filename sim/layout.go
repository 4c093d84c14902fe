package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/nearline/nearline/near"
)

// Resharding, as mainnet did it in 2025 (protocol versions 75, 76, 78):
//   - The genesis layout is nearcore's ShardLayout V1: shard ids are the
//     indexes 0..n-1.
//   - Config.ReshardAt names heights; at the first epoch start at or after
//     each, one shard splits in two under a ShardLayout V2 derived from the
//     layout before it, as nearcore's ShardLayoutV2::derive does: one new
//     boundary account, the parent's id replaced at its index by two new
//     ids (the largest id + 1 and + 2), shards_split_map naming every
//     shard's children (itself when not split) and shards_parent_map the
//     reverse; version 3. So ids stop being contiguous after the first
//     split.
//   - The shard split is the one Config.SplitShards names, else the one
//     holding the most accounts; the new boundary account is the middle
//     one of its accounts (byte order), the first account of the right
//     child.
//   - The protocol version moves up by one with each split, so the
//     EXPERIMENTAL_protocol_config of each layout is a protocol version of
//     its own; genesis_config keeps the genesis layout and version.
//   - The parent's state divides between the children: accounts, keys,
//     code and data follow their account's shard; global contract code the
//     parent had is on both children; receipts waiting on the parent go to
//     the child of their receiver; receipts the parent made and its next
//     chunk would have carried go in the left child's first chunk.
//   - A child whose chunk is missing in its first blocks repeats the
//     parent's last chunk header (shard_id the parent's), as nearcore's
//     get_prev_chunk_headers maps a shard to its parent's index in the
//     previous block; the block's shard at that index is the child.

// shardLayout is the shard layout of a run of epochs.
type shardLayout struct {
	fromEpoch  uint64 // the first epoch it is in force
	protocol   uint32 // the protocol version of those epochs
	boundaries []string
	ids        []uint64 // shard ids by shard index
	// parents maps a shard id to the id of the shard it split from (V2;
	// nil for the genesis layout); split names the parent split into the
	// layout's new shards, splitIndex its index in the layout before.
	parents    map[uint64]uint64
	split      uint64
	splitIndex int
	view       near.ShardLayout
	config     json.RawMessage // the EXPERIMENTAL_protocol_config result
}

// index returns the index of the shard that holds account.
func (l *shardLayout) index(account string) int { return near.ShardIndex(l.boundaries, account) }

// indexOf returns the index of shard id; ok is false when the layout has
// no such shard.
func (l *shardLayout) indexOf(id uint64) (int, bool) {
	i := slices.Index(l.ids, id)
	return i, i >= 0
}

// genesisLayout is the V1 layout over boundaries.
func genesisLayout(boundaries []string, protocol uint32) *shardLayout {
	ids := make([]uint64, len(boundaries)+1)
	parents := make([]uint64, len(ids))
	for i := range ids {
		ids[i], parents[i] = uint64(i), uint64(i)
	}
	return &shardLayout{protocol: protocol, boundaries: boundaries, ids: ids, splitIndex: -1,
		view: near.ShardLayout{V1: &near.ShardLayoutV1{
			BoundaryAccounts: boundaries, ShardsSplitMap: [][]uint64{}, ToParentShardMap: parents, Version: 1,
		}}}
}

// derive splits the shard that holds boundary at boundary, as nearcore's
// ShardLayoutV2::derive: the children take the largest id + 1 and + 2.
func (l *shardLayout) derive(boundary string, epoch uint64) (*shardLayout, error) {
	if slices.Contains(l.boundaries, boundary) {
		return nil, fmt.Errorf("derive shard layout: %s is a boundary already", boundary)
	}
	p := l.index(boundary)
	parent := l.ids[p]
	top := slices.Max(l.ids)
	left, right := top+1, top+2
	boundaries := slices.Insert(slices.Clone(l.boundaries), p, boundary)
	ids := slices.Concat(l.ids[:p], []uint64{left, right}, l.ids[p+1:])
	v2 := &near.ShardLayoutV2{
		BoundaryAccounts: boundaries, ShardIDs: ids,
		IDToIndexMap: map[string]uint64{}, IndexToIDMap: map[string]uint64{},
		ShardsSplitMap: map[string][]uint64{}, ShardsParentMap: map[string]uint64{},
		Version: 3,
	}
	parents := map[uint64]uint64{}
	for i, id := range ids {
		v2.IDToIndexMap[strconv.FormatUint(id, 10)] = uint64(i)
		v2.IndexToIDMap[strconv.Itoa(i)] = id
		parents[id] = id
	}
	parents[left], parents[right] = parent, parent
	for _, id := range l.ids {
		children := []uint64{id}
		if id == parent {
			children = []uint64{left, right}
		}
		v2.ShardsSplitMap[strconv.FormatUint(id, 10)] = children
	}
	for child, par := range parents {
		v2.ShardsParentMap[strconv.FormatUint(child, 10)] = par
	}
	return &shardLayout{fromEpoch: epoch, protocol: l.protocol + 1, boundaries: boundaries, ids: ids,
		parents: parents, split: parent, splitIndex: p, view: near.ShardLayout{V2: v2}}, nil
}

// reshardEpochs returns the epochs at whose start the chain splits a
// shard: for each height of cfg.ReshardAt, the first epoch starting at or
// after it.
func reshardEpochs(cfg Config) ([]uint64, error) {
	var out []uint64
	for _, h := range cfg.ReshardAt {
		if h <= cfg.GenesisHeight {
			return nil, fmt.Errorf("reshard height %d: must be above the genesis height %d", h, cfg.GenesisHeight)
		}
		e := (h - cfg.GenesisHeight + cfg.EpochLength - 1) / cfg.EpochLength
		if slices.Contains(out, e) {
			return nil, fmt.Errorf("reshard height %d: falls in the epoch of another reshard height (one split per epoch)", h)
		}
		out = append(out, e)
	}
	slices.Sort(out)
	return out, nil
}

// layoutAt returns the layout in force at height.
func (c *chain) layoutAt(height uint64) *shardLayout {
	e, _ := c.epochOf(height)
	l := c.layouts[0]
	for _, next := range c.layouts[1:] {
		if next.fromEpoch > e {
			break
		}
		l = next
	}
	return l
}

// shardIDOf returns the id of the shard that holds account at height.
func (c *chain) shardIDOf(account string, height uint64) uint64 {
	l := c.layoutAt(height)
	return l.ids[l.index(account)]
}

// maybeReshard splits a shard when the block at height h, the first of its
// epoch, starts an epoch chosen by Config.ReshardAt: it derives the new
// layout and divides the parent's per-shard queues between the children.
func (c *chain) maybeReshard(h uint64) error {
	e, _ := c.epochOf(h)
	if len(c.pendingSplits) == 0 || c.pendingSplits[0] > e {
		return nil
	}
	c.pendingSplits = c.pendingSplits[1:]
	old := c.layout
	shard := -1 // the shard holding the most accounts
	if n := len(c.layouts) - 1; n < len(c.cfg.SplitShards) {
		i, ok := old.indexOf(c.cfg.SplitShards[n])
		if !ok {
			return fmt.Errorf("reshard at %d: the layout has no shard %d to split (ids %v)", h, c.cfg.SplitShards[n], old.ids)
		}
		shard = i
	}
	boundary, ok := c.splitBoundary(h-1, shard)
	if !ok {
		return fmt.Errorf("reshard at %d: no shard has two accounts to split between", h)
	}
	nl, err := old.derive(boundary, e)
	if err != nil {
		return fmt.Errorf("reshard at %d: %w", h, err)
	}
	if nl.config, err = c.protocolConfig(nl); err != nil {
		return err
	}
	p := nl.splitIndex
	twice := func(n int) []int { // new index -> old index
		out := make([]int, 0, n+1)
		for i := range n {
			out = append(out, i)
			if i == p {
				out = append(out, i)
			}
		}
		return out
	}
	from := twice(len(old.ids))
	lastChunk := make([]*near.ChunkHeaderView, len(from))
	applied := make([]appliedChunk, len(from))
	outgoing := make([][]*receiptRecord, len(from))
	incoming := make([][]*receiptRecord, len(from))
	for i, o := range from {
		lastChunk[i], applied[i] = c.lastChunk[o], c.applied[o]
		if o != p {
			outgoing[i], incoming[i] = c.outgoing[o], c.incoming[o]
		}
	}
	outgoing[p] = c.outgoing[p]
	c.layout = nl
	c.layouts = append(c.layouts, nl)
	for _, r := range c.incoming[p] {
		dest := c.destShard(r)
		incoming[dest] = append(incoming[dest], r)
	}
	c.lastChunk, c.applied, c.outgoing, c.incoming = lastChunk, applied, outgoing, incoming
	c.st.splitGlobal(old.ids[p], nl.ids[p], nl.ids[p+1])
	return nil
}

// splitBoundary picks the new boundary account: the middle account (byte
// order) of the accounts that exist at height in the shard at index shard
// or, for -1, in the shard holding the most of them.
func (c *chain) splitBoundary(height uint64, shard int) (string, bool) {
	byShard := make([][]string, len(c.layout.ids))
	for id := range c.st.accounts {
		if c.st.accountAt(id, height) != nil {
			s := c.layout.index(id)
			byShard[s] = append(byShard[s], id)
		}
	}
	best := shard
	if best < 0 {
		best = 0
		for s := range byShard {
			if len(byShard[s]) > len(byShard[best]) {
				best = s
			}
		}
	}
	accounts := byShard[best]
	if len(accounts) < 2 {
		return "", false
	}
	sort.Strings(accounts)
	return accounts[len(accounts)/2], true
}

// splitGlobal gives both children the global contract code the parent
// had, with its history (each shard's trie holds the code it received).
func (s *state) splitGlobal(parent uint64, children ...uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, child := range children {
		m := map[string]history[deployedCode]{}
		for key, versions := range s.global[parent] {
			m[key] = slices.Clone(versions)
		}
		s.global[child] = m
	}
}
