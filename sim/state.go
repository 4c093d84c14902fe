package sim

import (
	"bytes"
	"sort"
	"sync"

	"github.com/nearline/nearline/near"
)

// state is the chain's state with its full history: for every account,
// access key, contract code and contract data key, the list of versions by
// the height of the block that wrote them (ascending). A nil value is a
// deletion. The genesis state is written at the genesis height.
type state struct {
	// mu lets the shards of one block execute in parallel: each touches its
	// own accounts only, but the maps are shared.
	mu       sync.RWMutex
	accounts map[string]history[*near.Account]
	keys     map[string]map[string]history[*near.AccessKeyView]
	code     map[string]history[deployedCode]
	data     map[string]map[string]history[[]byte]
	// global holds global contract code per shard id, by globalKey.
	global map[uint64]map[string]history[deployedCode]
}

// deployedCode is a contract's code (nil: deleted) and its hash.
type deployedCode struct {
	code []byte
	hash string
}

// version is the value an item has from the block at height on.
type version[T any] struct {
	height uint64
	value  T
}

// history is an item's versions in ascending height order.
type history[T any] []version[T]

// at returns the value of the last version at or below height; the zero
// value (nil: deleted or never written) when there is none.
func (h history[T]) at(height uint64) T {
	i := sort.Search(len(h), func(i int) bool { return h[i].height > height })
	if i == 0 {
		var none T
		return none
	}
	return h[i-1].value
}

// put makes v the value at height: it replaces a version written earlier
// at the same height, else it is appended.
func (h history[T]) put(height uint64, v T) history[T] {
	if n := len(h); n > 0 && h[n-1].height == height {
		h[n-1].value = v
		return h
	}
	return append(h, version[T]{height, v})
}

// putIn puts v at height into the history m[outer][inner], making the
// inner map on first use.
func putIn[K comparable, T any](m map[K]map[string]history[T], outer K, inner string, height uint64, v T) {
	byInner := m[outer]
	if byInner == nil {
		byInner = map[string]history[T]{}
		m[outer] = byInner
	}
	byInner[inner] = byInner[inner].put(height, v)
}

func newState() *state {
	return &state{
		accounts: map[string]history[*near.Account]{},
		keys:     map[string]map[string]history[*near.AccessKeyView]{},
		code:     map[string]history[deployedCode]{},
		data:     map[string]map[string]history[[]byte]{},
		global:   map[uint64]map[string]history[deployedCode]{},
	}
}

func (s *state) accountAt(id string, height uint64) *near.Account {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.accountAtNoLock(id, height)
}

func (s *state) accountAtNoLock(id string, height uint64) *near.Account {
	return s.accounts[id].at(height)
}

func (s *state) keyAt(id, pk string, height uint64) *near.AccessKeyView {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.keyAtNoLock(id, pk, height)
}

func (s *state) keyAtNoLock(id, pk string, height uint64) *near.AccessKeyView {
	return s.keys[id][pk].at(height)
}

// keysAt returns the account's keys at height, sorted as nearcore's trie
// sorts them (by the borsh bytes of the public key).
func (s *state) keysAt(id string, height uint64) []near.AccessKeyInfoView {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.keysAtNoLock(id, height)
}

func (s *state) keysAtNoLock(id string, height uint64) []near.AccessKeyInfoView {
	var out []near.AccessKeyInfoView
	for pk := range s.keys[id] {
		if k := s.keyAtNoLock(id, pk, height); k != nil {
			out = append(out, near.AccessKeyInfoView{PublicKey: pk, AccessKey: *k})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return bytes.Compare(near.PublicKeyBorsh(out[i].PublicKey), near.PublicKeyBorsh(out[j].PublicKey)) < 0
	})
	return out
}

func (s *state) codeAt(id string, height uint64) ([]byte, string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.codeAtNoLock(id, height)
}

func (s *state) codeAtNoLock(id string, height uint64) ([]byte, string) {
	return codeAt(s.code[id], height)
}

// codeAt returns the code h holds at height and its hash; nil when there
// is none or it was deleted.
func codeAt(h history[deployedCode], height uint64) ([]byte, string) {
	v := h.at(height)
	if v.code == nil {
		return nil, ""
	}
	return v.code, v.hash
}

func (s *state) dataAt(id string, key []byte, height uint64) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dataAtNoLock(id, key, height)
}

func (s *state) dataAtNoLock(id string, key []byte, height uint64) []byte {
	return s.data[id][string(key)].at(height)
}

// stateAt returns the account's contract data under prefix at height, in
// key order.
func (s *state) stateAt(id string, prefix []byte, height uint64) []near.StateItem {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stateAtNoLock(id, prefix, height)
}

func (s *state) stateAtNoLock(id string, prefix []byte, height uint64) []near.StateItem {
	var out []near.StateItem
	for k := range s.data[id] {
		if !bytes.HasPrefix([]byte(k), prefix) {
			continue
		}
		if v := s.dataAtNoLock(id, []byte(k), height); v != nil {
			out = append(out, near.StateItem{Key: []byte(k), Value: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Key, out[j].Key) < 0 })
	return out
}

func (s *state) putAccount(id string, height uint64, a *near.Account) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts[id] = s.accounts[id].put(height, a)
}

func (s *state) putKey(id, pk string, height uint64, k *near.AccessKeyView) {
	s.mu.Lock()
	defer s.mu.Unlock()
	putIn(s.keys, id, pk, height, k)
}

func (s *state) putCode(id string, height uint64, code []byte, hash string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.code[id] = s.code[id].put(height, deployedCode{code, hash})
}

func (s *state) putData(id string, key []byte, height uint64, value []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	putIn(s.data, id, string(key), height, value)
}
