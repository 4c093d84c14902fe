package near

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/nearline/nearline/internal/fastjson"
)

// SignedTransactionView is a transaction as a chunk or a tx status shows it.
type SignedTransactionView struct {
	SignerID    string       `json:"signer_id"`
	PublicKey   string       `json:"public_key"`
	Nonce       uint64       `json:"nonce"`
	ReceiverID  string       `json:"receiver_id"`
	Actions     []ActionView `json:"actions"`
	PriorityFee uint64       `json:"priority_fee"`
	Signature   string       `json:"signature"`
	Hash        string       `json:"hash"`
}

// ActionView is one action of a transaction or receipt. Exactly one field is
// set; it encodes as nearcore's externally tagged enum ("CreateAccount" or
// {"Transfer": {...}}).
type ActionView struct {
	CreateAccount  bool
	DeployContract *DeployContractAction
	FunctionCall   *FunctionCallAction
	Transfer       *TransferAction
	Stake          *StakeAction
	AddKey         *AddKeyAction
	DeleteKey      *DeleteKeyAction
	DeleteAccount  *DeleteAccountAction
	// Global contracts (protocol 77+).
	DeployGlobalContract            *DeployContractAction
	DeployGlobalContractByAccountID *DeployContractAction
	UseGlobalContract               *UseGlobalContractAction
	UseGlobalContractByAccountID    *UseGlobalContractByAccountIDAction
	// Delegate is a meta-transaction (NEP-366): a relayer's transaction or
	// receipt carrying a user's signed delegate action.
	Delegate *SignedDelegateAction
	// Other holds any action kind this package does not model (a gas-key
	// action, a Delegate of a shape it does not know, ...), kept as the raw
	// JSON it came in.
	Other json.RawMessage
}

// ActionDelegate is the name of the meta-transaction action.
const ActionDelegate = "Delegate"

// SignedDelegateAction is the body of a Delegate action, as nearcore's
// ActionView::Delegate shows it: the user's delegate action and the
// user's signature over it.
type SignedDelegateAction struct {
	DelegateAction DelegateAction `json:"delegate_action"`
	Signature      string         `json:"signature"`
}

// DelegateAction is what the user (SenderID) signed: actions to run on
// ReceiverID as SenderID, valid up to MaxBlockHeight with Nonce on the
// access key PublicKey. Nested actions are never Delegate themselves.
type DelegateAction struct {
	SenderID       string       `json:"sender_id"`
	ReceiverID     string       `json:"receiver_id"`
	Actions        []ActionView `json:"actions"`
	Nonce          uint64       `json:"nonce"`
	MaxBlockHeight uint64       `json:"max_block_height"`
	PublicKey      string       `json:"public_key"`
}

// DeployContractAction deploys code (base64 in JSON).
type DeployContractAction struct {
	Code []byte `json:"code"`
}

// FunctionCallAction calls a contract method; Args is base64 in JSON.
type FunctionCallAction struct {
	MethodName string `json:"method_name"`
	Args       []byte `json:"args"`
	Gas        uint64 `json:"gas"`
	Deposit    U128   `json:"deposit"`
}

// TransferAction moves Deposit yoctoNEAR to the receiver.
type TransferAction struct {
	Deposit U128 `json:"deposit"`
}

// StakeAction stakes Stake yoctoNEAR with PublicKey.
type StakeAction struct {
	Stake     U128   `json:"stake"`
	PublicKey string `json:"public_key"`
}

// AddKeyAction adds an access key.
type AddKeyAction struct {
	PublicKey string        `json:"public_key"`
	AccessKey AccessKeyView `json:"access_key"`
}

// DeleteKeyAction removes an access key.
type DeleteKeyAction struct {
	PublicKey string `json:"public_key"`
}

// UseGlobalContractAction makes the receiver run the global code with
// CodeHash.
type UseGlobalContractAction struct {
	CodeHash string `json:"code_hash"`
}

// UseGlobalContractByAccountIDAction makes the receiver run the global code
// AccountID deployed, following its redeploys.
type UseGlobalContractByAccountIDAction struct {
	AccountID string `json:"account_id"`
}

// Names of the global contract actions.
const (
	ActionDeployGlobalContract            = "DeployGlobalContract"
	ActionDeployGlobalContractByAccountID = "DeployGlobalContractByAccountId"
	ActionUseGlobalContract               = "UseGlobalContract"
	ActionUseGlobalContractByAccountID    = "UseGlobalContractByAccountId"
)

// DeleteAccountAction deletes the receiver, sending its balance to
// BeneficiaryID.
type DeleteAccountAction struct {
	BeneficiaryID string `json:"beneficiary_id"`
}

// actionMembers are the actions with a body, in ActionView's field order,
// which Kind and MarshalJSON follow.
var actionMembers = []member[ActionView]{
	memberOf("DeployContract", func(a *ActionView) **DeployContractAction { return &a.DeployContract }),
	memberOf("FunctionCall", func(a *ActionView) **FunctionCallAction { return &a.FunctionCall }),
	memberOf("Transfer", func(a *ActionView) **TransferAction { return &a.Transfer }),
	memberOf("Stake", func(a *ActionView) **StakeAction { return &a.Stake }),
	memberOf("AddKey", func(a *ActionView) **AddKeyAction { return &a.AddKey }),
	memberOf("DeleteKey", func(a *ActionView) **DeleteKeyAction { return &a.DeleteKey }),
	memberOf("DeleteAccount", func(a *ActionView) **DeleteAccountAction { return &a.DeleteAccount }),
	memberOf(ActionDeployGlobalContract, func(a *ActionView) **DeployContractAction { return &a.DeployGlobalContract }),
	memberOf(ActionDeployGlobalContractByAccountID, func(a *ActionView) **DeployContractAction { return &a.DeployGlobalContractByAccountID }),
	memberOf(ActionUseGlobalContract, func(a *ActionView) **UseGlobalContractAction { return &a.UseGlobalContract }),
	memberOf(ActionUseGlobalContractByAccountID, func(a *ActionView) **UseGlobalContractByAccountIDAction { return &a.UseGlobalContractByAccountID }),
	delegateMember(),
}

// delegateMember is the Delegate action. Only the shape nearcore serves
// today is modelled; another (new members, a later version) is kept as it
// came.
func delegateMember() member[ActionView] {
	m := memberOf(ActionDelegate, func(a *ActionView) **SignedDelegateAction { return &a.Delegate })
	m.decode = func(a *ActionView, body []byte) (bool, error) {
		d, ok := decodeDelegate(body)
		a.Delegate = d
		return ok, nil
	}
	return m
}

// Kind returns the action's name as nearcore spells it ("Transfer", ...).
func (a ActionView) Kind() string {
	if a.CreateAccount {
		return "CreateAccount"
	}
	if m, _, ok := setMember(&a, actionMembers); ok {
		return m.tag
	}
	return VariantName(a.Other)
}

// MarshalJSON encodes the action as nearcore's tagged enum.
func (a ActionView) MarshalJSON() ([]byte, error) {
	if a.CreateAccount {
		return []byte(`"CreateAccount"`), nil
	}
	return marshalTagged(&a, actionMembers, a.Other, "action")
}

// UnmarshalJSON decodes nearcore's tagged action enum.
func (a *ActionView) UnmarshalJSON(data []byte) error {
	*a = ActionView{}
	var name string
	if !isObject(data) && json.Unmarshal(data, &name) == nil {
		if name == "CreateAccount" {
			a.CreateAccount = true
			return nil
		}
		a.Other = append(json.RawMessage(nil), data...)
		return nil
	}
	return unmarshalTagged(a, data, "action", actionMembers, &a.Other)
}

// decodeDelegate decodes a Delegate action's body when it has exactly the
// members SignedDelegateAction models, so that encoding it again gives the
// same JSON; ok is false otherwise. The comparison of the encoding with the
// body is what refuses a member the type does not have (dropped from the
// encoding), a repeated one, or one named in another case.
func decodeDelegate(body []byte) (*SignedDelegateAction, bool) {
	d := new(SignedDelegateAction)
	if fastjson.Unmarshal(body, d) != nil {
		return nil, false
	}
	for _, a := range d.DelegateAction.Actions {
		if a.Other != nil || a.Delegate != nil {
			return nil, false
		}
	}
	again, err := fastjson.Marshal(d)
	if err != nil || !bytes.Equal(again, body) && !jsonEqual(again, body) {
		return nil, false
	}
	return d, true
}

// jsonEqual reports whether a and b are the same JSON text once
// insignificant whitespace is removed.
func jsonEqual(a, b []byte) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// ReceiptView is a receipt as a chunk or a tx status shows it.
type ReceiptView struct {
	PredecessorID string          `json:"predecessor_id"`
	ReceiverID    string          `json:"receiver_id"`
	ReceiptID     string          `json:"receipt_id"`
	Receipt       ReceiptEnumView `json:"receipt"`
	Priority      uint64          `json:"priority"`
}

// ReceiptEnumView is {"Action": {...}} or {"Data": {...}}, or a kind
// Nearline does not model (a newer nearcore's GlobalContractDistribution,
// say), kept as it came in Other and encoded back the same.
type ReceiptEnumView struct {
	Action *ActionReceiptView `json:"Action,omitempty"`
	Data   *DataReceiptView   `json:"Data,omitempty"`
	Other  json.RawMessage    `json:"-"`
}

// Kind is the receipt's variant: "Action", "Data", or the tag of Other.
func (r ReceiptEnumView) Kind() string {
	switch {
	case r.Action != nil:
		return "Action"
	case r.Data != nil:
		return "Data"
	}
	return VariantName(r.Other)
}

// MarshalJSON encodes Other as it came, else the modelled variant.
func (r ReceiptEnumView) MarshalJSON() ([]byte, error) {
	if r.Action == nil && r.Data == nil && len(r.Other) > 0 {
		return r.Other, nil
	}
	type modelled ReceiptEnumView
	return json.Marshal(modelled(r))
}

// UnmarshalJSON decodes the Action or Data variant and keeps any other in
// Other.
func (r *ReceiptEnumView) UnmarshalJSON(data []byte) error {
	*r = ReceiptEnumView{}
	tagged, err := tags(data)
	if err != nil {
		return fmt.Errorf("decode receipt: %w", err)
	}
	modelledTag := slices.ContainsFunc(tagged, func(m tagMember) bool { return m.name == "Action" || m.name == "Data" })
	if !modelledTag {
		r.Other = append(json.RawMessage(nil), data...)
		return nil
	}
	type modelled ReceiptEnumView
	var m modelled
	if err := fastjson.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("decode receipt: %w", err)
	}
	*r = ReceiptEnumView(m)
	return nil
}

// ActionReceiptView is the body of an action receipt.
type ActionReceiptView struct {
	SignerID            string             `json:"signer_id"`
	SignerPublicKey     string             `json:"signer_public_key"`
	GasPrice            U128               `json:"gas_price"`
	OutputDataReceivers []DataReceiverView `json:"output_data_receivers"`
	InputDataIDs        []string           `json:"input_data_ids"`
	Actions             []ActionView       `json:"actions"`
	IsPromiseYield      bool               `json:"is_promise_yield"`
}

// DataReceiverView names where a receipt's result goes.
type DataReceiverView struct {
	DataID     string `json:"data_id"`
	ReceiverID string `json:"receiver_id"`
}

// DataReceiptView is the body of a data receipt; Data is base64 in JSON.
type DataReceiptView struct {
	DataID          string  `json:"data_id"`
	Data            *[]byte `json:"data"`
	IsPromiseResume bool    `json:"is_promise_resume"`
}

// ExecutionOutcomeWithIDView is the outcome of a transaction or receipt.
type ExecutionOutcomeWithIDView struct {
	Proof     []MerklePathItem     `json:"proof"`
	BlockHash string               `json:"block_hash"`
	ID        string               `json:"id"`
	Outcome   ExecutionOutcomeView `json:"outcome"`
}

// MerklePathItem is one step of an outcome proof.
type MerklePathItem struct {
	Hash      string `json:"hash"`
	Direction string `json:"direction"`
}

// ExecutionOutcomeView is what executing a transaction or receipt did.
type ExecutionOutcomeView struct {
	Logs        []string        `json:"logs"`
	ReceiptIDs  []string        `json:"receipt_ids"`
	GasBurnt    uint64          `json:"gas_burnt"`
	TokensBurnt U128            `json:"tokens_burnt"`
	ExecutorID  string          `json:"executor_id"`
	Status      json.RawMessage `json:"status"`
	Metadata    json.RawMessage `json:"metadata"`
}

// FinalExecutionOutcomeView is the result of `tx`; the `EXPERIMENTAL_tx_status`
// result adds Receipts.
type FinalExecutionOutcomeView struct {
	FinalExecutionStatus string                       `json:"final_execution_status"`
	Status               json.RawMessage              `json:"status"`
	Transaction          SignedTransactionView        `json:"transaction"`
	TransactionOutcome   ExecutionOutcomeWithIDView   `json:"transaction_outcome"`
	ReceiptsOutcome      []ExecutionOutcomeWithIDView `json:"receipts_outcome"`
	Receipts             []ReceiptView                `json:"receipts,omitempty"`
}

// ReceiptToTxView is the result of EXPERIMENTAL_receipt_to_tx: the
// transaction a receipt descends from.
type ReceiptToTxView struct {
	TransactionHash string `json:"transaction_hash"`
	SenderAccountID string `json:"sender_account_id"`
}
