package sim

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
)

// Meta-transactions (NEP-366) and yield/resume (NEP-519), as nearcore
// runs them.
//
// A relayed transaction is signed by a relayer, sent to the user (the
// delegate action's sender) and carries one Delegate action. Its receipt,
// relayer → sender, checks the delegate action (not expired, sender is
// the receiver, the user's access key exists, nonce above the key's), sets
// the key's nonce, and makes a new receipt sender → delegate receiver with
// the nested actions, signed by the relayer: the relayer prepaid all gas
// and deposits and gets the gas refunds; a failed nested receipt's deposit
// goes back to the sender, as in nearcore.
//
// A yield (promise_yield_create) is a PromiseYield receipt: an action
// receipt (is_promise_yield) from the contract to itself that waits for one
// data id. It is listed in the creating outcome's receipt_ids but travels
// in no chunk: it waits, postponed, on its shard. promise_yield_resume in a
// later receipt of the contract sends a PromiseResume data receipt
// (is_promise_resume) that travels in chunks; a yield not resumed within
// Config.YieldTimeout blocks gets one with no data from its shard, and
// runs with a failed result.

// feeDelegate is nearcore's delegate_cost.
var feeDelegate = fee{200_000_000_000, 200_000_000_000, 200_000_000_000}

// delegateParts are the gas and deposit of a Delegate action: the
// relayer's receipt burns execOwn and nestedSend; nestedExec and nestedGas
// are prepaid for the receipt it makes.
type delegateParts struct {
	execOwn, nestedSend, nestedExec, nestedGas uint64
	deposit                                    near.U128
}

func delegateCost(d *near.SignedDelegateAction) delegateParts {
	da := d.DelegateAction
	sir := da.SenderID == da.ReceiverID
	p := delegateParts{execOwn: feeDelegate.exec, nestedSend: feeReceipt.send(sir), nestedExec: feeReceipt.exec}
	for _, a := range da.Actions {
		s, x := actionFees(a, sir)
		p.nestedSend += s
		p.nestedExec += x
		if a.FunctionCall != nil {
			p.nestedGas += a.FunctionCall.Gas
		}
	}
	p.deposit = depositOf(da.Actions)
	return p
}

// applyDelegate runs action index of the relayer's receipt r on the
// sender's account: on success it sets the key's nonce and returns the
// receipt with the nested actions; otherwise it fails res.
func (e *executor) applyDelegate(r *receiptRecord, index int, d *near.SignedDelegateAction, res *receiptResult) *receiptRecord {
	c := e.c
	da := d.DelegateAction
	parts := delegateCost(d)
	res.unburnt += parts.nestedSend + parts.nestedExec
	switch {
	case e.height > da.MaxBlockHeight:
		failed(res, index, "DelegateActionExpired")
		return nil
	case da.SenderID != r.view.ReceiverID:
		failed(res, index, map[string]any{"DelegateActionSenderDoesNotMatchTxReceiver": map[string]string{
			"sender_id": da.SenderID, "receiver_id": r.view.ReceiverID}})
		return nil
	}
	key := c.st.keyAt(da.SenderID, da.PublicKey, e.height)
	if key == nil {
		failed(res, index, map[string]any{"DelegateActionAccessKeyError": map[string]any{"AccessKeyNotFound": map[string]string{
			"account_id": da.SenderID, "public_key": da.PublicKey}}})
		return nil
	}
	if da.Nonce <= key.Nonce {
		failed(res, index, map[string]any{"DelegateActionInvalidNonce": map[string]uint64{"delegate_nonce": da.Nonce, "ak_nonce": key.Nonce}})
		return nil
	}
	if bound := e.height * 1_000_000; da.Nonce >= bound {
		failed(res, index, map[string]any{"DelegateActionNonceTooLarge": map[string]uint64{"delegate_nonce": da.Nonce, "upper_bound": bound}})
		return nil
	}
	k := *key
	k.Nonce = da.Nonce
	e.setKey(da.SenderID, da.PublicKey, &k)
	res.unburnt -= parts.nestedSend
	res.forwarded += parts.nestedExec + parts.nestedGas
	act := r.view.Receipt.Action
	return &receiptRecord{
		txHash: r.txHash,
		view: near.ReceiptView{
			PredecessorID: da.SenderID, ReceiverID: da.ReceiverID,
			ReceiptID: hashOf([]byte("delegate"), []byte(r.view.ReceiptID), u64bytes(uint64(index))),
			Receipt: near.ReceiptEnumView{Action: &near.ActionReceiptView{
				SignerID: act.SignerID, SignerPublicKey: act.SignerPublicKey, GasPrice: act.GasPrice,
				OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{},
				Actions: da.Actions,
			}},
		},
		prepaidGas:  parts.nestedExec + parts.nestedGas,
		pessimistic: r.pessimistic,
	}
}

// yieldWait is a yield waiting on its shard for its data, until expires;
// asked is set once the generator has sent a resume for it.
type yieldWait struct {
	dataID  string
	account string
	expires uint64
	asked   bool
}

// yieldState answers nearvm's promise_yield_resume: a yield of account is
// waiting while its receipt is postponed on its data id.
type yieldState struct {
	c       *chain
	account string
}

func (y yieldState) YieldPending(dataID []byte) bool {
	id := near.Base58Encode(dataID)
	y.c.execMu.Lock()
	defer y.c.execMu.Unlock()
	r := y.c.postponed[id]
	return r != nil && r.view.ReceiverID == y.account && r.view.Receipt.Action != nil && r.view.Receipt.Action.IsPromiseYield
}

// isYield reports whether r is a PromiseYield receipt.
func isYield(r *receiptRecord) bool {
	return r.view.Receipt.Action != nil && r.view.Receipt.Action.IsPromiseYield
}

// holdYield keeps a PromiseYield receipt postponed on its data id, with
// its timeout. The caller holds no lock.
func (e *executor) holdYield(r *receiptRecord) {
	c := e.c
	id := r.view.Receipt.Action.InputDataIDs[0]
	c.execMu.Lock()
	defer c.execMu.Unlock()
	c.postponed[id] = r
	c.yields[r.view.ReceiverID] = append(c.yields[r.view.ReceiverID], yieldWait{dataID: id, account: r.view.ReceiverID, expires: e.height + c.cfg.YieldTimeout})
}

// resolveYieldTimeouts sends, from shard s, a PromiseResume receipt with
// no data to every yield of s whose timeout has come and that still waits,
// as nearcore's chunk application does after its receipts.
func (e *executor) resolveYieldTimeouts(s int) {
	c := e.c
	c.execMu.Lock()
	defer c.execMu.Unlock()
	accounts := slices.Sorted(maps.Keys(c.yields))
	for _, account := range accounts {
		if c.shardOf(account) != s {
			continue
		}
		waits := c.yields[account]
		n := 0
		for ; n < len(waits) && waits[n].expires <= e.height; n++ {
			w := waits[n]
			r := c.postponed[w.dataID]
			if r == nil || !isYield(r) {
				continue // resumed meanwhile
			}
			c.outgoing[s] = append(c.outgoing[s], &receiptRecord{txHash: r.txHash, view: near.ReceiptView{
				PredecessorID: w.account, ReceiverID: w.account,
				ReceiptID: hashOf([]byte("yield-timeout"), []byte(w.dataID)),
				Receipt:   near.ReceiptEnumView{Data: &near.DataReceiptView{DataID: w.dataID, IsPromiseResume: true}},
			}})
		}
		if n == len(waits) {
			delete(c.yields, account)
		} else {
			c.yields[account] = waits[n:]
		}
	}
}

// yieldReceipt is the PromiseYield receipt of promise p of a call by
// receipt r on account id.
func yieldReceipt(r *receiptRecord, id string, i int, p nearvm.PromiseReceipt) *receiptRecord {
	act := r.view.Receipt.Action
	return &receiptRecord{
		txHash: r.txHash,
		view: near.ReceiptView{
			PredecessorID: id, ReceiverID: id,
			ReceiptID: hashOf([]byte("promise"), []byte(r.view.ReceiptID), u64bytes(uint64(i))),
			Receipt: near.ReceiptEnumView{Action: &near.ActionReceiptView{
				SignerID: act.SignerID, SignerPublicKey: act.SignerPublicKey, GasPrice: act.GasPrice,
				OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{near.Base58Encode(p.YieldDataID)},
				Actions: promiseActions(p.Actions), IsPromiseYield: true,
			}},
		},
		pessimistic: act.GasPrice,
	}
}

// resumeReceipts are the PromiseResume data receipts of a call's resumes.
func resumeReceipts(r *receiptRecord, id string, resumes []nearvm.Resume) []*receiptRecord {
	out := make([]*receiptRecord, 0, len(resumes))
	for i, rs := range resumes {
		payload := append([]byte{}, rs.Payload...)
		out = append(out, &receiptRecord{txHash: r.txHash, view: near.ReceiptView{
			PredecessorID: id, ReceiverID: id,
			ReceiptID: hashOf([]byte("resume"), []byte(r.view.ReceiptID), u64bytes(uint64(i))),
			Receipt:   near.ReceiptEnumView{Data: &near.DataReceiptView{DataID: near.Base58Encode(rs.DataID), Data: &payload, IsPromiseResume: true}},
		}})
	}
	return out
}

// yieldAccount is where the yield/resume contract is deployed at genesis.
const yieldAccount = "yield.near"

// metaYieldKinds are the relayed and yield/resume transactions.
func metaYieldKinds() []kindWeight {
	return []kindWeight{
		{4, (*generator).relayed},
		{2, (*generator).yieldRequest},
		{2, (*generator).yieldRespond},
	}
}

// relayed makes a relayer send a user's delegate action: a status or a
// guest book message through a contract (when the chain has contracts) or
// a transfer; one in eight has already expired when it runs.
func (g *generator) relayed(h uint64) (txPlan, bool) {
	relayer, sender := g.pickUser(), g.pickUser()
	if relayer == sender || !g.exists(sender) {
		return txPlan{}, false
	}
	pk := g.key0(sender)
	key := g.c.st.keyAt(sender, pk, g.c.next)
	if key == nil {
		return txPlan{}, false
	}
	var receiver string
	var actions []near.ActionView
	switch n := g.r.IntN(3); {
	case n == 0 && g.c.vm != nil:
		receiver = "status.near"
		actions = []near.ActionView{call("set_status", fmt.Sprintf(`{"message":"relayed at %d"}`, h), 20, near.U128{})}
	case n == 1 && g.c.vm != nil:
		receiver = "guestbook.near"
		actions = []near.ActionView{call("add_message", fmt.Sprintf(`{"text":"Relayed by %s at %d"}`, relayer, h), 20, near.U128{})}
	default:
		receiver = g.pickUser()
		actions = []near.ActionView{transfer(milliNEAR(1 + uint64(g.r.IntN(1000))))}
	}
	maxHeight := h + 100
	if g.r.IntN(8) == 0 {
		maxHeight = h // expired by the time the relayer's receipt runs
	}
	da := near.DelegateAction{SenderID: sender, ReceiverID: receiver, Actions: actions,
		Nonce: key.Nonce + 1 + uint64(g.r.IntN(50)), MaxBlockHeight: maxHeight, PublicKey: pk}
	b, _ := json.Marshal(da)
	sig := signature(sender, hashOf([]byte("delegate"), b))
	return g.plan(relayer, sender, near.ActionView{Delegate: &near.SignedDelegateAction{DelegateAction: da, Signature: sig}})
}

// yieldRequest calls request on the yield contract: it yields, and the
// transaction waits for a resume or the timeout.
func (g *generator) yieldRequest(h uint64) (txPlan, bool) {
	if g.c.vm == nil {
		return txPlan{}, false
	}
	g.counter++
	return g.plan(g.pickUser(), yieldAccount, call("request", fmt.Sprintf(`{"request":%d,"height":%d}`, g.counter, h), 50, near.U128{}))
}

// yieldRespond resumes a waiting yield, half of the time: the rest time
// out. Its arguments are the data id and the payload, as the contract
// reads them.
func (g *generator) yieldRespond(h uint64) (txPlan, bool) {
	if g.c.vm == nil || g.r.IntN(2) == 0 {
		return txPlan{}, false
	}
	var open []*yieldWait
	for _, account := range slices.Sorted(maps.Keys(g.c.yields)) {
		waits := g.c.yields[account]
		for i := range waits {
			if !waits[i].asked {
				open = append(open, &waits[i])
			}
		}
	}
	if len(open) == 0 {
		return txPlan{}, false
	}
	w := open[g.r.IntN(len(open))]
	raw, err := near.Base58Decode(w.dataID)
	if err != nil {
		return txPlan{}, false
	}
	w.asked = true
	args := append(raw, fmt.Sprintf("answer at %d", h)...)
	return g.plan(g.pickUser(), yieldAccount, near.ActionView{FunctionCall: &near.FunctionCallAction{
		MethodName: "respond", Args: args, Gas: 30_000_000_000_000, Deposit: near.U128{}}})
}
