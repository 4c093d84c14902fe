package near

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Global contracts (protocol 77+, NEP-591): code deployed once and shared.
// A deployment by code hash is immutable; one by account id follows the
// owner's redeploys. The code reaches each shard through a chain of
// GlobalContractDistribution receipts, one shard after another.

// Members of a newer nearcore's AccountView naming the global contract an
// account uses (absent for an account that uses none).
const (
	AccountGlobalContractHash      = "global_contract_hash"
	AccountGlobalContractAccountID = "global_contract_account_id"
)

// GlobalContractID names global contract code: by its hash, or by the
// account that deployed it. Exactly one field is set.
type GlobalContractID struct {
	CodeHash  string
	AccountID string
}

// ByAccount reports whether the code is named by its owner's account.
func (id GlobalContractID) ByAccount() bool { return id.AccountID != "" }

// Kind is "code_hash" or "account_id", as the archive's tables name them.
func (id GlobalContractID) Kind() string {
	if id.ByAccount() {
		return "account_id"
	}
	return "code_hash"
}

// Value is the hash or the account id.
func (id GlobalContractID) Value() string {
	if id.ByAccount() {
		return id.AccountID
	}
	return id.CodeHash
}

// MarshalJSON encodes nearcore's GlobalContractIdentifier: {"CodeHash": h}
// or {"AccountId": a}.
func (id GlobalContractID) MarshalJSON() ([]byte, error) {
	if id.ByAccount() {
		return json.Marshal(map[string]string{"AccountId": id.AccountID})
	}
	return json.Marshal(map[string]string{"CodeHash": id.CodeHash})
}

// UnmarshalJSON decodes {"CodeHash": h} or {"AccountId": a}, and the view
// form {"hash": h} or {"account_id": a}.
func (id *GlobalContractID) UnmarshalJSON(data []byte) error {
	var tagged map[string]string
	if err := json.Unmarshal(data, &tagged); err != nil || len(tagged) != 1 {
		return fmt.Errorf("decode global contract identifier: want one of CodeHash, AccountId")
	}
	*id = GlobalContractID{}
	for k, v := range tagged {
		switch k {
		case "CodeHash", "hash":
			id.CodeHash = v
		case "AccountId", "account_id":
			id.AccountID = v
		default:
			return fmt.Errorf("decode global contract identifier: unknown variant %q", k)
		}
	}
	return nil
}

// debugText is the identifier as nearcore's Rust Debug prints it in error
// messages: CodeHash(<hash>) or AccountId(AccountId("<id>")).
func (id GlobalContractID) debugText() string {
	if id.ByAccount() {
		return "AccountId(AccountId(" + strconv.Quote(id.AccountID) + "))"
	}
	return "CodeHash(" + id.CodeHash + ")"
}

// GlobalContract returns the global contract the account uses, read from
// the members a newer nearcore's AccountView carries beyond the modelled
// ones; ok is false for an account with local code or none.
func (a Account) GlobalContract() (id GlobalContractID, ok bool) {
	if len(a.Extra) == 0 {
		return id, false
	}
	var members struct {
		Hash      *string `json:"global_contract_hash"`
		AccountID *string `json:"global_contract_account_id"`
	}
	if json.Unmarshal(a.Extra, &members) != nil {
		return id, false
	}
	switch {
	case members.Hash != nil && *members.Hash != "":
		return GlobalContractID{CodeHash: *members.Hash}, true
	case members.AccountID != nil && *members.AccountID != "":
		return GlobalContractID{AccountID: *members.AccountID}, true
	}
	return id, false
}

// GlobalContractExtra is the Extra of an account that uses id: the member
// nearcore's AccountView adds for it.
func GlobalContractExtra(id GlobalContractID) json.RawMessage {
	key, value := AccountGlobalContractHash, id.CodeHash
	if id.ByAccount() {
		key, value = AccountGlobalContractAccountID, id.AccountID
	}
	b, _ := json.Marshal(map[string]string{key: value})
	return b
}

// GlobalContractDistribution is the body of a GlobalContractDistribution
// receipt: the code on its way to TargetShard, having reached
// AlreadyDeliveredShards.
type GlobalContractDistribution struct {
	ID                     GlobalContractID `json:"id"`
	TargetShard            uint64           `json:"target_shard"`
	AlreadyDeliveredShards []uint64         `json:"already_delivered_shards"`
	Code                   []byte           `json:"code"`
	// Nonce orders deployments of one identifier (newer nearcore); nil
	// when the upstream's receipt has none.
	Nonce *uint64 `json:"nonce,omitempty"`
}

// ReceiptGlobalContractDistribution is the receipt kind that carries
// global contract code between shards.
const ReceiptGlobalContractDistribution = "GlobalContractDistribution"

var errNotDistribution = errors.New("not a GlobalContractDistribution receipt")

// GlobalDistribution decodes the receipt as a GlobalContractDistribution;
// ok is false for any other kind.
func (r ReceiptEnumView) GlobalDistribution() (d GlobalContractDistribution, ok bool, err error) {
	if r.Kind() != ReceiptGlobalContractDistribution {
		return d, false, nil
	}
	var tagged map[string]GlobalContractDistribution
	if err := json.Unmarshal(r.Other, &tagged); err != nil {
		return d, false, fmt.Errorf("decode %s receipt: %w", ReceiptGlobalContractDistribution, err)
	}
	d, ok = tagged[ReceiptGlobalContractDistribution]
	if !ok {
		return d, false, errNotDistribution
	}
	return d, true, nil
}

// GlobalContractDistributionReceipt encodes the receipt body nearcore
// serves for d (nonce omitted when nil).
func GlobalContractDistributionReceipt(d GlobalContractDistribution) ReceiptEnumView {
	if d.AlreadyDeliveredShards == nil {
		d.AlreadyDeliveredShards = []uint64{}
	}
	b, _ := json.Marshal(map[string]GlobalContractDistribution{ReceiptGlobalContractDistribution: d})
	return ReceiptEnumView{Other: b}
}

// NoGlobalContractCode is the error of view_global_contract_code(_by_account_id)
// when the code has not reached the node's shard at that block.
func NoGlobalContractCode(id GlobalContractID, at BlockStamp) *Error {
	return HandlerError("NO_GLOBAL_CONTRACT_CODE", struct {
		Identifier GlobalContractID `json:"identifier"`
		stampInfo
	}{id, stampInfo(at)},
		fmt.Sprintf("Global contract code with identifier %s has never been observed on the node", id.debugText()))
}
