package sim

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
)

//go:embed contracts/*.wasm
var contractFiles embed.FS

// contractKind is a contract the chain deploys at genesis, with the call
// that initialises it.
type contractKind struct {
	name     string // file name without .wasm
	account  string // genesis account it is deployed on
	initFn   string
	initArgs string
	// setup are change calls made at genesis after the init call.
	setup []genesisCall
}

type genesisCall struct {
	method, args string
	depositMilli uint64
}

var contractKinds = []contractKind{
	{name: "status_message", account: "status.near"},
	{name: "fungible_token", account: "ft.near", initFn: "new_default_meta", initArgs: `{"owner_id":"ft.near","total_supply":"1000000000000000000000000000000000"}`,
		// status.near receives ft_transfer_call (and fails it: no ft_on_transfer).
		setup: []genesisCall{{method: "storage_deposit", args: `{"account_id":"status.near"}`, depositMilli: 100}}},
	{name: "guestbook_rs", account: "guestbook.near"},
	{name: "non_fungible_token", account: "nft.near", initFn: "new_default_meta", initArgs: `{"owner_id":"nft.near"}`},
	// Yields in request and resumes in respond (source: yield_resume.wat).
	{name: "yield_resume", account: yieldAccount},
}

func contractCode(name string) ([]byte, error) {
	b, err := contractFiles.ReadFile("contracts/" + name + ".wasm")
	if err != nil {
		return nil, fmt.Errorf("read contract %s: %w", name, err)
	}
	return b, nil
}

// contractVM runs contracts through nearvm.
type contractVM struct {
	rt    *nearvm.Runtime
	owned bool // started by the node, closed by Close
}

// stateStorage is nearvm.Storage over the sim state of one account at one
// height.
type stateStorage struct {
	st      *state
	account string
	height  uint64
}

func (s stateStorage) Get(_ context.Context, key []byte) ([]byte, bool, error) {
	v := s.st.dataAt(s.account, key, s.height)
	return v, v != nil, nil
}

func toVM(u near.U128) nearvm.U128   { return nearvm.U128{Hi: u.Hi, Lo: u.Lo} }
func fromVM(u nearvm.U128) near.U128 { return near.U128{Hi: u.Hi, Lo: u.Lo} }

// callOutcome is what a change-mode call did.
type callOutcome struct {
	gas      uint64
	logs     []string
	ret      []byte
	failure  json.RawMessage // receipt status when the call failed
	receipts []*receiptRecord
	returned *receiptRecord
	resumes  []*receiptRecord // PromiseResume data receipts
}

// callContract runs a FunctionCall action of receipt r on the receiver's
// contract in change mode and applies its writes.
func (e *executor) callContract(r *receiptRecord, work *near.Account, fc *near.FunctionCallAction, index int) (*callOutcome, error) {
	c := e.c
	id := r.view.ReceiverID
	act := r.view.Receipt.Action
	code, codeHash := c.codeFor(id, work, e.height)
	if code == nil || c.vm == nil {
		kind := map[string]any{"FunctionCallError": map[string]any{"CompilationError": map[string]any{"CodeDoesNotExist": map[string]string{"account_id": id}}}}
		return &callOutcome{failure: actionError(index, kind)}, nil
	}
	epoch, _ := c.epochOf(e.height)
	vctx := nearvm.Context{
		CurrentAccountID:     id,
		SignerAccountID:      act.SignerID,
		SignerAccountPK:      near.PublicKeyBorsh(act.SignerPublicKey),
		PredecessorAccountID: r.view.PredecessorID,
		Input:                fc.Args,
		BlockHeight:          e.height,
		BlockTimestamp:       uint64(c.genesisTime().UnixNano()) + (e.height-c.cfg.GenesisHeight)*1_000_000_000,
		EpochHeight:          epoch,
		StorageUsage:         work.StorageUsage,
		AccountBalance:       toVM(work.Amount),
		AccountLockedBalance: toVM(work.Locked),
		AttachedDeposit:      toVM(fc.Deposit),
		PrepaidGas:           fc.Gas,
		RandomSeed:           hashBytes([]byte("seed"), []byte(e.prevHash)),
		Validators:           c.validatorStakes(),
		ActionHash:           hashBytes([]byte("action"), []byte(r.view.ReceiptID), u64bytes(uint64(index))),
		Yields:               yieldState{c: c, account: id},
	}
	c.execMu.Lock()
	inputs := make([]*[]byte, len(act.InputDataIDs))
	for i, id := range act.InputDataIDs {
		inputs[i] = c.received[id]
	}
	c.execMu.Unlock()
	for _, d := range inputs {
		if d == nil {
			vctx.PromiseResults = append(vctx.PromiseResults, nearvm.PromiseResult{Status: nearvm.PromiseFailed})
		} else {
			vctx.PromiseResults = append(vctx.PromiseResults, nearvm.PromiseResult{Status: nearvm.PromiseSuccessful, Data: *d})
		}
	}
	out, err := c.vm.rt.Call(context.Background(), code, codeHash, fc.MethodName, vctx, stateStorage{c.st, id, e.height})
	var fce *nearvm.FunctionCallError
	if errors.As(err, &fce) {
		res := &callOutcome{failure: actionError(index, map[string]any{"FunctionCallError": fce})}
		if out != nil {
			res.gas, res.logs = out.GasUsed, out.Logs
		}
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("call %s.%s: %w", id, fc.MethodName, err)
	}
	for _, w := range out.Writes {
		if w.Removed {
			e.setData(id, w.Key, nil)
		} else {
			e.setData(id, w.Key, w.Value)
		}
	}
	work.StorageUsage = out.StorageUsage
	res := &callOutcome{gas: out.GasUsed, logs: out.Logs, ret: out.ReturnData, resumes: resumeReceipts(r, id, out.Resumes)}
	for i, p := range out.Receipts {
		if p.YieldDataID != nil {
			nr := yieldReceipt(r, id, i, p)
			res.receipts = append(res.receipts, nr)
			if out.ReturnedReceipt == i {
				res.returned = nr
			}
			continue
		}
		nr := &receiptRecord{
			txHash: r.txHash,
			view: near.ReceiptView{
				PredecessorID: id, ReceiverID: p.ReceiverID,
				ReceiptID: promiseID(r.view.ReceiptID, index, i),
				Receipt: near.ReceiptEnumView{Action: &near.ActionReceiptView{
					SignerID: act.SignerID, SignerPublicKey: act.SignerPublicKey, GasPrice: act.GasPrice,
					OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{},
					Actions: promiseActions(p.Actions),
				}},
			},
			pessimistic: act.GasPrice,
		}
		res.receipts = append(res.receipts, nr)
		if out.ReturnedReceipt == i {
			res.returned = nr
		}
	}
	// promise_then: the dependency sends its result to the callback.
	for j, p := range out.Receipts {
		for _, i := range p.DependsOn {
			if i < 0 || i >= len(res.receipts) {
				continue
			}
			dataID := hashOf([]byte("data"), []byte(res.receipts[i].view.ReceiptID), []byte(res.receipts[j].view.ReceiptID))
			from := res.receipts[i].view.Receipt.Action
			from.OutputDataReceivers = append(from.OutputDataReceivers, near.DataReceiverView{DataID: dataID, ReceiverID: p.ReceiverID})
			to := res.receipts[j].view.Receipt.Action
			to.InputDataIDs = append(to.InputDataIDs, dataID)
		}
	}
	return res, nil
}

// promiseID is the id of promise i made by action (a function call) of
// receipt. Every call numbers its promises from 0, so the action is part of
// the id after the first: two calls in one receipt must not make the same
// receipt (the first call's ids are those the simulator always made).
func promiseID(receipt string, action, i int) string {
	if action == 0 {
		return hashOf([]byte("promise"), []byte(receipt), u64bytes(uint64(i)))
	}
	return hashOf([]byte("promise"), []byte(receipt), u64bytes(uint64(action)), u64bytes(uint64(i)))
}

func (c *chain) validatorStakes() map[string]nearvm.U128 {
	m := make(map[string]nearvm.U128, len(c.validators))
	for _, v := range c.validators {
		m[v.account] = toVM(v.stake)
	}
	return m
}

func pkString(borsh []byte) string {
	if len(borsh) == 0 {
		return ""
	}
	curve := "ed25519"
	if borsh[0] == 1 {
		curve = "secp256k1"
	}
	return curve + ":" + near.Base58Encode(borsh[1:])
}

// promiseActions converts the actions of a promise receipt to views.
func promiseActions(in []nearvm.Action) []near.ActionView {
	out := make([]near.ActionView, 0, len(in))
	for _, a := range in {
		switch a.Kind {
		case nearvm.ActionCreateAccount:
			out = append(out, near.ActionView{CreateAccount: true})
		case nearvm.ActionDeployContract:
			out = append(out, near.ActionView{DeployContract: &near.DeployContractAction{Code: a.Code}})
		case nearvm.ActionFunctionCall:
			out = append(out, near.ActionView{FunctionCall: &near.FunctionCallAction{MethodName: a.MethodName, Args: a.Args, Gas: a.Gas, Deposit: fromVM(a.Deposit)}})
		case nearvm.ActionTransfer:
			out = append(out, near.ActionView{Transfer: &near.TransferAction{Deposit: fromVM(a.Deposit)}})
		case nearvm.ActionStake:
			out = append(out, near.ActionView{Stake: &near.StakeAction{Stake: fromVM(a.Deposit), PublicKey: pkString(a.PublicKey)}})
		case nearvm.ActionAddKey:
			k := near.AccessKeyView{Nonce: a.Nonce}
			if !a.FullAccess {
				var allowance *near.U128
				if a.Allowance != nil {
					v := fromVM(*a.Allowance)
					allowance = &v
				}
				k.Permission.FunctionCall = &near.FunctionCallPermission{Allowance: allowance, ReceiverID: a.ReceiverID, MethodNames: a.MethodNames}
			}
			out = append(out, near.ActionView{AddKey: &near.AddKeyAction{PublicKey: pkString(a.PublicKey), AccessKey: k}})
		case nearvm.ActionDeleteKey:
			out = append(out, near.ActionView{DeleteKey: &near.DeleteKeyAction{PublicKey: pkString(a.PublicKey)}})
		case nearvm.ActionDeleteAccount:
			out = append(out, near.ActionView{DeleteAccount: &near.DeleteAccountAction{BeneficiaryID: a.BeneficiaryID}})
		}
	}
	return out
}

// viewCall runs method in view mode at height, for query call_function.
func (c *chain) viewCall(ctx context.Context, id string, method string, args []byte, height uint64) (*nearvm.Outcome, error) {
	acc := c.st.accountAt(id, height)
	code, codeHash := c.codeFor(id, acc, height)
	b := c.byHeight[height]
	epoch, _ := c.epochOf(height)
	vctx := nearvm.Context{
		CurrentAccountID:     id,
		SignerAccountID:      id,
		SignerAccountPK:      append([]byte{0}, make([]byte, 32)...),
		PredecessorAccountID: id,
		Input:                args,
		BlockHeight:          height,
		BlockTimestamp:       b.view.Header.Timestamp,
		EpochHeight:          epoch,
		StorageUsage:         acc.StorageUsage,
		AccountBalance:       toVM(acc.Amount),
		AccountLockedBalance: toVM(acc.Locked),
		RandomSeed:           hashBytes([]byte(b.view.Header.PrevStateRoot)),
		View:                 true,
		Validators:           c.validatorStakes(),
	}
	return c.vm.rt.Call(ctx, code, codeHash, method, vctx, stateStorage{c.st, id, height})
}
