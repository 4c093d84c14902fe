// Package chain says which NEAR chain a genesis file, an upstream node or
// an archive belongs to, and refuses to mix two. A chain is known by its
// genesis config's chain_id and genesis_height, the genesis block's hash
// where it is known, and the genesis config members that never change on a
// chain (genesis_time, the genesis validators, total_supply, ...): two
// chains made with the same chain_id and height (two simulator seeds, a
// fork of a test network) differ there.
package chain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// ErrOtherChain is returned (wrapped) when two accounts of a chain differ.
var ErrOtherChain = errors.New("of another chain")

// Identity is one account of a chain.
type Identity struct {
	ChainID       string
	GenesisHeight uint64
	// GenesisHash is the genesis block's hash; "" when unknown (a node that
	// no longer has the block, a genesis file).
	GenesisHash string
	// Config is the genesis config (a genesis_config result, or a genesis
	// file less its records); nil when unknown. Its identifying members
	// are compared where both sides have them.
	Config json.RawMessage
}

// FromConfig reads the identity a genesis config gives: its chain_id and
// genesis_height, and the config itself.
func FromConfig(cfg json.RawMessage) (Identity, error) {
	var c struct {
		ChainID       *string `json:"chain_id"`
		GenesisHeight *uint64 `json:"genesis_height"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil {
		return Identity{}, fmt.Errorf("read genesis config: %w", err)
	}
	if c.ChainID == nil || c.GenesisHeight == nil {
		return Identity{}, errors.New("read genesis config: no chain_id or genesis_height")
	}
	return Identity{ChainID: *c.ChainID, GenesisHeight: *c.GenesisHeight, Config: cfg}, nil
}

// identifying are the genesis config members compared besides chain_id and
// genesis_height: fixed when a chain is made, and served by genesis_config
// as the genesis file has them.
var identifying = []string{"genesis_time", "protocol_version", "epoch_length", "total_supply", "validators", "shard_layout"}

// Compare returns nil when a and b are the same chain as far as both
// know, else an error wrapping ErrOtherChain that names both sides (aName,
// bName) and what each says of every member in which they differ.
func Compare(a Identity, aName string, b Identity, bName string) error {
	var lines []string
	add := func(member string, av, bv any) {
		lines = append(lines, fmt.Sprintf("%s: %s says %s, %s says %s", member, aName, show(av), bName, show(bv)))
	}
	if a.ChainID != b.ChainID {
		add("chain_id", a.ChainID, b.ChainID)
	}
	if a.GenesisHeight != b.GenesisHeight {
		add("genesis_height", a.GenesisHeight, b.GenesisHeight)
	}
	if a.GenesisHash != "" && b.GenesisHash != "" && a.GenesisHash != b.GenesisHash {
		add("genesis block hash", a.GenesisHash, b.GenesisHash)
	}
	if len(lines) == 0 {
		am, bm := members(a.Config), members(b.Config)
		for _, m := range identifying {
			av, aok := am[m]
			bv, bok := bm[m]
			if aok && bok {
				if path, ad, bd, ok := firstDiff(m, av, bv); ok {
					add(path, ad, bd)
				}
			}
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("%s is %w than %s (%s)", bName, ErrOtherChain, aName, strings.Join(lines, "; "))
}

// firstDiff returns the first place (a JSON path below path) where a and b
// differ, and what each holds there.
func firstDiff(path string, a, b any) (string, any, any, bool) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			break
		}
		keys := make([]string, 0, len(av))
		for k := range av {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if _, ok := bv[k]; !ok {
				return path, a, b, true
			}
			if p, ad, bd, ok := firstDiff(path+"."+k, av[k], bv[k]); ok {
				return p, ad, bd, true
			}
		}
		return "", nil, nil, false
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		for i := range av {
			if p, ad, bd, ok := firstDiff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i]); ok {
				return p, ad, bd, true
			}
		}
		return "", nil, nil, false
	}
	if reflect.DeepEqual(a, b) {
		return "", nil, nil, false
	}
	return path, a, b, true
}

// members decodes a config's members (numbers kept as written), or none.
func members(cfg json.RawMessage) map[string]any {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(cfg))
	dec.UseNumber()
	if len(cfg) == 0 || dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// maxShown bounds a member's value in a message.
const maxShown = 120

// show is a value as a message quotes it, cut to maxShown bytes.
func show(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = fmt.Sprintf("%q", v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	if len(s) > maxShown {
		s = s[:maxShown] + "..."
	}
	return s
}
