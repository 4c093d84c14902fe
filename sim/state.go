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
	accounts map[string][]accountVersion
	keys     map[string]map[string][]keyVersion
	code     map[string][]codeVersion
	data     map[string]map[string][]dataVersion
	// global holds global contract code per shard id, by globalKey.
	global map[uint64]map[string][]codeVersion
}

type accountVersion struct {
	height  uint64
	account *near.Account
}

type keyVersion struct {
	height uint64
	key    *near.AccessKeyView
}

type codeVersion struct {
	height uint64
	code   []byte // nil: deleted
	hash   string
}

type dataVersion struct {
	height uint64
	value  []byte // nil: deleted
}

func newState() *state {
	return &state{
		accounts: map[string][]accountVersion{},
		keys:     map[string]map[string][]keyVersion{},
		code:     map[string][]codeVersion{},
		data:     map[string]map[string][]dataVersion{},
		global:   map[uint64]map[string][]codeVersion{},
	}
}

// at returns the index of the last version at or below height, or -1.
func at(n int, heightOf func(int) uint64, height uint64) int {
	i := sort.Search(n, func(i int) bool { return heightOf(i) > height })
	return i - 1
}

func (s *state) accountAt(id string, height uint64) *near.Account {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.accountAtNoLock(id, height)
}

func (s *state) accountAtNoLock(id string, height uint64) *near.Account {
	vs := s.accounts[id]
	i := at(len(vs), func(i int) uint64 { return vs[i].height }, height)
	if i < 0 {
		return nil
	}
	return vs[i].account
}

func (s *state) keyAt(id, pk string, height uint64) *near.AccessKeyView {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.keyAtNoLock(id, pk, height)
}

func (s *state) keyAtNoLock(id, pk string, height uint64) *near.AccessKeyView {
	vs := s.keys[id][pk]
	i := at(len(vs), func(i int) uint64 { return vs[i].height }, height)
	if i < 0 {
		return nil
	}
	return vs[i].key
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
	return codeVersionAt(s.code[id], height)
}

// codeVersionAt returns the code of the last version of vs at or below
// height and its hash; nil when there is none or it was deleted.
func codeVersionAt(vs []codeVersion, height uint64) ([]byte, string) {
	i := at(len(vs), func(i int) uint64 { return vs[i].height }, height)
	if i < 0 || vs[i].code == nil {
		return nil, ""
	}
	return vs[i].code, vs[i].hash
}

func (s *state) dataAt(id string, key []byte, height uint64) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dataAtNoLock(id, key, height)
}

func (s *state) dataAtNoLock(id string, key []byte, height uint64) []byte {
	vs := s.data[id][string(key)]
	i := at(len(vs), func(i int) uint64 { return vs[i].height }, height)
	if i < 0 {
		return nil
	}
	return vs[i].value
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
	vs := s.accounts[id]
	if n := len(vs); n > 0 && vs[n-1].height == height {
		vs[n-1].account = a
		return
	}
	s.accounts[id] = append(vs, accountVersion{height, a})
}

func (s *state) putKey(id, pk string, height uint64, k *near.AccessKeyView) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.keys[id]
	if m == nil {
		m = map[string][]keyVersion{}
		s.keys[id] = m
	}
	vs := m[pk]
	if n := len(vs); n > 0 && vs[n-1].height == height {
		vs[n-1].key = k
		return
	}
	m[pk] = append(vs, keyVersion{height, k})
}

func (s *state) putCode(id string, height uint64, code []byte, hash string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.code[id] = putCodeVersion(s.code[id], codeVersion{height, code, hash})
}

// putCodeVersion makes v the version of vs at its height: it replaces a
// version written earlier at the same height, else it is appended.
func putCodeVersion(vs []codeVersion, v codeVersion) []codeVersion {
	if n := len(vs); n > 0 && vs[n-1].height == v.height {
		vs[n-1] = v
		return vs
	}
	return append(vs, v)
}

func (s *state) putData(id string, key []byte, height uint64, value []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.data[id]
	if m == nil {
		m = map[string][]dataVersion{}
		s.data[id] = m
	}
	vs := m[string(key)]
	if n := len(vs); n > 0 && vs[n-1].height == height {
		vs[n-1].value = value
		return
	}
	m[string(key)] = append(vs, dataVersion{height, value})
}
