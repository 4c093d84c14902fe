package sim

import (
	"encoding/hex"

	"github.com/nearline/nearline/near"
)

// implicitKey returns the public key a NEAR-implicit account id names.
func implicitKey(id string) (string, bool) {
	if len(id) != 64 {
		return "", false
	}
	b, err := hex.DecodeString(id)
	if err != nil {
		return "", false
	}
	return "ed25519:" + near.Base58Encode(b), true
}

// newKeyNonce is the nonce nearcore gives a key added at height h.
func newKeyNonce(h uint64) uint64 {
	if h == 0 {
		return 0
	}
	return (h - 1) * 1_000_000
}

// applyActions runs a receipt's actions against the state. A failing action
// leaves no writes (the generator only makes actions it expects to pass, so
// failures are the chain's own: a receiver deleted meanwhile, a contract
// that panics).
func (e *executor) applyActions(r *receiptRecord) (*receiptResult, error) {
	c := e.c
	id := r.view.ReceiverID
	act := r.view.Receipt.Action
	acc := c.st.accountAt(id, e.height)
	res := &receiptResult{status: successValue(nil)}
	var work *near.Account
	if acc != nil {
		a := *acc
		work = &a
	}
	// Validate first, so that a failure writes nothing.
	for i, a := range act.Actions {
		switch {
		case a.CreateAccount:
			if work != nil {
				return failed(res, i, map[string]any{"AccountAlreadyExists": map[string]string{"account_id": id}}), nil
			}
			work = &near.Account{CodeHash: zeroHash, StorageUsage: storageAccount}
			continue
		case work == nil && a.Transfer != nil && i == 0:
			if pk, ok := implicitKey(id); ok {
				work = &near.Account{CodeHash: zeroHash, StorageUsage: storageAccount}
				k := near.AccessKeyView{Nonce: newKeyNonce(e.height)}
				work.StorageUsage += accessKeyStorage(pk, k)
				e.setKey(id, pk, &k)
				continue
			}
		}
		if work == nil {
			return failed(res, i, map[string]any{"AccountDoesNotExist": map[string]string{"account_id": id}}), nil
		}
		if gid, ok := useGlobalID(a); ok {
			if code, _ := c.st.globalAt(c.shardOf(id), gid, e.height); code == nil {
				return failed(res, i, map[string]any{"GlobalContractDoesNotExist": map[string]any{"identifier": gid}}), nil
			}
		}
	}
	for i, a := range act.Actions {
		switch {
		case a.CreateAccount:
		case a.Transfer != nil:
			work.Amount = add(work.Amount, a.Transfer.Deposit)
		case a.AddKey != nil:
			k := a.AddKey.AccessKey
			k.Nonce = newKeyNonce(e.height)
			work.StorageUsage += accessKeyStorage(a.AddKey.PublicKey, k)
			e.setKey(id, a.AddKey.PublicKey, &k)
		case a.DeleteKey != nil:
			if old := c.st.keyAt(id, a.DeleteKey.PublicKey, e.height); old != nil {
				work.StorageUsage -= min(work.StorageUsage, accessKeyStorage(a.DeleteKey.PublicKey, *old))
				e.setKey(id, a.DeleteKey.PublicKey, nil)
			}
		case a.DeployContract != nil:
			old, _ := c.st.codeAt(id, e.height)
			work.StorageUsage = work.StorageUsage - uint64(len(old)) + uint64(len(a.DeployContract.Code))
			work.CodeHash = near.HashOf(a.DeployContract.Code).String()
			e.setCode(id, a.DeployContract.Code)
		case a.Stake != nil:
			if a.Stake.Stake.Cmp(work.Locked) > 0 {
				work.Amount = sub(work.Amount, sub(a.Stake.Stake, work.Locked))
				work.Locked = a.Stake.Stake
			}
			e.proposals[c.shardOf(id)] = append(e.proposals[c.shardOf(id)], near.ValidatorStakeView{
				AccountID: id, PublicKey: a.Stake.PublicKey, Stake: a.Stake.Stake, ValidatorStakeStructVersion: "V1"})
		case a.FunctionCall != nil:
			work.Amount = add(work.Amount, a.FunctionCall.Deposit)
			e.setAccount(id, work)
			out, err := e.callContract(r, work, a.FunctionCall, i)
			if err != nil {
				return nil, err
			}
			res.fnGas += out.gas
			res.logs = append(res.logs, out.logs...)
			if out.failure != nil {
				// Undo the deposit; the call's writes were never applied.
				e.update = stateUpdate{}
				c.st.putAccount(id, e.height, acc)
				res.failed = true
				res.status = out.failure
				return res, nil
			}
			res.status = successValue(out.ret)
			res.value = out.ret
			res.receipts = append(res.receipts, out.receipts...)
			res.data = append(res.data, out.resumes...)
			if out.returned != nil {
				res.returned = out.returned
				res.status = successReceipt(out.returned.view.ReceiptID)
			}
		case a.DeployGlobalContract != nil || a.DeployGlobalContractByAccountID != nil:
			code := a.DeployGlobalContract
			if code == nil {
				code = a.DeployGlobalContractByAccountID
			}
			if kind := e.deployGlobal(c.shardOf(id), r, work, code.Code, a.DeployGlobalContractByAccountID != nil, res); kind != nil {
				res.distributions = nil
				return failed(res, i, kind), nil
			}
		case a.UseGlobalContract != nil || a.UseGlobalContractByAccountID != nil:
			gid, _ := useGlobalID(a)
			e.useGlobal(id, work, gid)
		case a.DeleteAccount != nil:
			e.deleteAccount(id, work, a.DeleteAccount.BeneficiaryID, r, res)
			return res, nil
		case a.Delegate != nil:
			nr := e.applyDelegate(r, i, a.Delegate, res)
			if nr == nil {
				return res, nil
			}
			res.receipts = append(res.receipts, nr)
		}
	}
	e.setAccount(id, work)
	return res, nil
}

// useGlobalID returns the global contract a Use action names.
func useGlobalID(a near.ActionView) (near.GlobalContractID, bool) {
	switch {
	case a.UseGlobalContract != nil:
		return near.GlobalContractID{CodeHash: a.UseGlobalContract.CodeHash}, true
	case a.UseGlobalContractByAccountID != nil:
		return near.GlobalContractID{AccountID: a.UseGlobalContractByAccountID.AccountID}, true
	}
	return near.GlobalContractID{}, false
}

func failed(res *receiptResult, index int, kind any) *receiptResult {
	res.failed = true
	res.status = actionError(index, kind)
	return res
}

// deleteAccount removes the account, its keys, code and data, and sends its
// balance to the beneficiary in a refund receipt.
func (e *executor) deleteAccount(id string, work *near.Account, beneficiary string, r *receiptRecord, res *receiptResult) {
	c := e.c
	for _, k := range c.st.keysAt(id, e.height) {
		e.setKey(id, k.PublicKey, nil)
	}
	if code, _ := c.st.codeAt(id, e.height); code != nil {
		e.setCode(id, nil)
	}
	for _, item := range c.st.stateAt(id, nil, e.height) {
		e.setData(id, item.Key, nil)
	}
	e.setAccount(id, nil)
	if !work.Amount.IsZero() {
		nr := e.refundReceipt(r, beneficiary, work.Amount, 2)
		res.receipts = append(res.receipts, nr)
	}
}
