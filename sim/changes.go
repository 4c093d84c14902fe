package sim

import (
	"sort"

	"github.com/nearline/nearline/near"
)

// change is one state change of a block, with the trie key nearcore
// stores it under (column byte, account id, separator, rest), which fixes
// the order `changes` and `block_effects` list changes in.
type change struct {
	trieKey string
	effect  string
	view    near.StateChangeWithCauseView
}

// Trie key columns.
const (
	colAccount      = "\x00"
	colContractCode = "\x01"
	colAccessKey    = "\x02"
	colContractData = "\x09"
)

func accountTrieKey(id string) string { return colAccount + id }
func codeTrieKey(id string) string    { return colContractCode + id }
func keyTrieKey(id, pk string) string {
	return colAccessKey + id + colAccessKey + string(near.PublicKeyBorsh(pk))
}
func dataTrieKey(id string, key []byte) string { return colContractData + id + "," + string(key) }

// stateUpdate collects the writes of one cause (a transaction, a receipt,
// a gas reward); commit turns each written key's final value into one
// change, as nearcore's state update does.
type stateUpdate struct {
	order   []string
	pending map[string]change
}

func (u *stateUpdate) put(ch change) {
	if u.pending == nil {
		u.pending = map[string]change{}
	}
	if _, ok := u.pending[ch.trieKey]; !ok {
		u.order = append(u.order, ch.trieKey)
	}
	u.pending[ch.trieKey] = ch
}

// commit returns the pending changes with cause and clears them.
func (u *stateUpdate) commit(cause near.StateChangeCauseView) []change {
	out := make([]change, 0, len(u.order))
	for _, k := range u.order {
		ch := u.pending[k]
		ch.view.Cause = cause
		out = append(out, ch)
	}
	u.order, u.pending = nil, nil
	return out
}

func (e *executor) setAccount(id string, a *near.Account) {
	e.c.st.putAccount(id, e.height, a)
	ch := change{trieKey: accountTrieKey(id), effect: near.EffectAccountTouched}
	if a == nil {
		ch.view = near.StateChangeWithCauseView{Type: near.ChangeAccountDeletion, Change: near.StateChangeValue{AccountID: id}}
	} else {
		acc := *a
		ch.view = near.StateChangeWithCauseView{Type: near.ChangeAccountUpdate, Change: near.StateChangeValue{AccountID: id, Account: &acc}}
	}
	e.update.put(ch)
}

func (e *executor) setKey(id, pk string, k *near.AccessKeyView) {
	e.c.st.putKey(id, pk, e.height, k)
	key := pk
	ch := change{trieKey: keyTrieKey(id, pk), effect: near.EffectAccessKeyTouched}
	if k == nil {
		ch.view = near.StateChangeWithCauseView{Type: near.ChangeAccessKeyDeletion, Change: near.StateChangeValue{AccountID: id, PublicKey: &key}}
	} else {
		ak := *k
		ch.view = near.StateChangeWithCauseView{Type: near.ChangeAccessKeyUpdate, Change: near.StateChangeValue{AccountID: id, PublicKey: &key, AccessKey: &ak}}
	}
	e.update.put(ch)
}

func (e *executor) setCode(id string, code []byte) {
	hash := ""
	if code != nil {
		hash = near.HashOf(code).String()
	}
	e.c.st.putCode(id, e.height, code, hash)
	ch := change{trieKey: codeTrieKey(id), effect: near.EffectContractCodeTouched}
	if code == nil {
		ch.view = near.StateChangeWithCauseView{Type: near.ChangeContractCodeDeletion, Change: near.StateChangeValue{AccountID: id}}
	} else {
		c := code
		ch.view = near.StateChangeWithCauseView{Type: near.ChangeContractCodeUpdate, Change: near.StateChangeValue{AccountID: id, CodeBase64: &c}}
	}
	e.update.put(ch)
}

func (e *executor) setData(id string, key, value []byte) {
	e.c.st.putData(id, key, e.height, value)
	k := append([]byte(nil), key...)
	ch := change{trieKey: dataTrieKey(id, key), effect: near.EffectDataTouched}
	if value == nil {
		ch.view = near.StateChangeWithCauseView{Type: near.ChangeDataDeletion, Change: near.StateChangeValue{AccountID: id, KeyBase64: &k}}
	} else {
		v := append([]byte(nil), value...)
		ch.view = near.StateChangeWithCauseView{Type: near.ChangeDataUpdate, Change: near.StateChangeValue{AccountID: id, KeyBase64: &k, ValueBase64: &v}}
	}
	e.update.put(ch)
}

func (e *executor) commit(cause near.StateChangeCauseView) {
	e.changes = append(e.changes, e.update.commit(cause)...)
}

// sortedChanges returns the block's changes grouped by trie key in key
// order, each key's changes in the order they happened.
func (e *executor) sortedChanges() []change {
	out := append([]change(nil), e.changes...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].trieKey < out[j].trieKey })
	return out
}

// effectsOf lists one entry per changed trie key, as
// EXPERIMENTAL_changes_in_block does.
func effectsOf(changes []change) []near.StateChangeKindView {
	out := []near.StateChangeKindView{}
	for i, ch := range changes {
		if i > 0 && changes[i-1].trieKey == ch.trieKey {
			continue
		}
		out = append(out, near.StateChangeKindView{Type: ch.effect, AccountID: ch.view.Change.AccountID})
	}
	return out
}
