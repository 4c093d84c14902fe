package sim

import (
	"encoding/json"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/near"
)

// executor applies one block: it routes receipts, converts transactions
// into receipts and executes receipts, writing state at the block's height
// and recording the changes with their causes.
type executor struct {
	c        *chain
	height   uint64
	prevHash string
	shards   []*shardWork
	update   stateUpdate
	changes  []change

	proposals        map[int][]near.ValidatorStakeView // stake proposals per shard
	executedReceipts []*receiptRecord
	newTxs           []*txRecord
	// byShard holds, per shard, the receipts executed in its chunk, in
	// execution order (block documents list them so).
	byShard [][]*receiptRecord
	// instantReceipts are the instant receipts processed (protocol86.go),
	// instantByShard the same per shard, in the order processed.
	instantReceipts []*receiptRecord
	instantByShard  [][]*receiptRecord
}

// txMetadata is the metadata of a transaction's execution outcome, as
// nearcore 2.x serves it (receiptMetadata for a receipt's).
const txMetadata = `{"version":1,"gas_profile":null}`

func (e *executor) run(produced []bool) error {
	c := e.c
	// A produced chunk carries the receipts its shard made since its
	// previous chunk; from then on their receivers may execute them.
	for s, ok := range produced {
		if !ok {
			continue
		}
		for _, r := range c.outgoing[s] {
			e.shards[s].receipts = append(e.shards[s].receipts, r.view)
			dest := c.destShard(r)
			c.incoming[dest] = append(c.incoming[dest], r)
		}
		c.outgoing[s] = nil
	}
	plans := c.gen.generate(e.height, produced)
	// Shards execute in parallel: each touches only its own accounts,
	// incoming and outgoing receipts, so the result does not depend on the
	// schedule. Per-shard executors keep their changes apart; they are
	// merged in shard order (and sorted by trie key afterwards).
	subs := make([]*executor, len(produced))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for s, ok := range produced {
		if !ok {
			continue
		}
		se := &executor{c: c, height: e.height, prevHash: e.prevHash, shards: e.shards, proposals: map[int][]near.ValidatorStakeView{}}
		subs[s] = se
		g.Go(func() error {
			queue := c.incoming[s]
			c.incoming[s] = nil
			for _, r := range queue {
				if err := se.execReceipt(s, r); err != nil {
					return err
				}
			}
			for _, p := range plans[s] {
				if err := se.processTx(s, p); err != nil {
					return err
				}
			}
			se.resolveYieldTimeouts(s)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	e.byShard = make([][]*receiptRecord, len(subs))
	e.instantByShard = make([][]*receiptRecord, len(subs))
	for s, se := range subs {
		if se == nil {
			continue
		}
		e.byShard[s] = se.executedReceipts
		e.instantByShard[s] = se.instantReceipts
		e.changes = append(e.changes, se.changes...)
		e.executedReceipts = append(e.executedReceipts, se.executedReceipts...)
		e.newTxs = append(e.newTxs, se.newTxs...)
		e.proposals[s] = append(e.proposals[s], se.proposals[s]...)
	}
	return nil
}

// txPlan is a transaction the generator wants signed and sent.
type txPlan struct {
	signer   string
	key      string
	receiver string
	actions  []near.ActionView
}

func (e *executor) processTx(s int, p txPlan) error {
	c := e.c
	acc := c.st.accountAt(p.signer, e.height)
	key := c.st.keyAt(p.signer, p.key, e.height)
	if acc == nil || key == nil {
		return nil // the generator's view went stale; drop the transaction
	}
	sir := p.signer == p.receiver
	sendGas, execGas := feeReceipt.send(sir), feeReceipt.exec
	var prepaid uint64
	deposit := near.U128{}
	for _, a := range p.actions {
		sg, eg := actionFees(a, sir)
		sendGas += sg
		execGas += eg
		if a.FunctionCall != nil {
			prepaid += a.FunctionCall.Gas
			deposit = add(deposit, a.FunctionCall.Deposit)
		}
		if a.Transfer != nil {
			deposit = add(deposit, a.Transfer.Deposit)
		}
		if a.Delegate != nil {
			p := delegateCost(a.Delegate)
			prepaid += p.nestedGas
			deposit = add(deposit, p.deposit)
		}
	}
	price := c.gasPrice
	pessimistic := mul(price, 103)
	pessimistic.Lo /= 100 // prices stay far below 2^64
	burnt := mul(price, sendGas)
	cost := add(add(burnt, mul(pessimistic, execGas+prepaid)), deposit)
	if acc.Amount.Cmp(cost) < 0 {
		return nil // nearcore would reject it: not enough balance
	}
	if fc := key.Permission.FunctionCall; fc != nil && fc.Allowance != nil && fc.Allowance.Cmp(cost) < 0 {
		return nil // nearcore would reject it: the key's allowance is spent
	}
	nonce := key.Nonce + 1
	tx := near.SignedTransactionView{
		SignerID: p.signer, PublicKey: p.key, Nonce: nonce, ReceiverID: p.receiver,
		Actions: p.actions, PriorityFee: 0,
	}
	tx.Hash = txHash(tx)
	tx.Signature = signature(p.signer, tx.Hash)

	newAcc := *acc
	newAcc.Amount = sub(acc.Amount, cost)
	newKey := *key
	newKey.Nonce = nonce
	if fc := key.Permission.FunctionCall; fc != nil && fc.Allowance != nil {
		left := sub(*fc.Allowance, cost)
		perm := *fc
		perm.Allowance = &left
		newKey.Permission.FunctionCall = &perm
	}
	e.setAccount(p.signer, &newAcc)
	e.setKey(p.signer, p.key, &newKey)
	e.commit(near.StateChangeCauseView{Type: "transaction_processing", TxHash: tx.Hash})

	rid := hashOf([]byte("receipt"), []byte(tx.Hash))
	r := &receiptRecord{
		txHash: tx.Hash,
		view: near.ReceiptView{
			PredecessorID: p.signer, ReceiverID: p.receiver, ReceiptID: rid,
			Receipt: near.ReceiptEnumView{Action: &near.ActionReceiptView{
				SignerID: p.signer, SignerPublicKey: p.key, GasPrice: price,
				OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{},
				Actions: p.actions,
			}},
		},
		prepaidGas:  execGas + prepaid,
		pessimistic: pessimistic,
	}
	c.execMu.Lock()
	c.receipts[rid] = r
	c.execMu.Unlock()
	rec := &txRecord{view: tx, height: e.height, receiptID: rid}
	rec.outcome = near.ExecutionOutcomeWithIDView{
		Proof: e.proof(tx.Hash), ID: tx.Hash,
		Outcome: near.ExecutionOutcomeView{
			Logs: []string{}, ReceiptIDs: []string{rid}, GasBurnt: sendGas, TokensBurnt: burnt,
			ExecutorID: p.signer, Status: successReceipt(rid), Metadata: json.RawMessage(txMetadata),
		},
	}
	c.execMu.Lock()
	c.txs[tx.Hash] = rec
	c.execMu.Unlock()
	e.newTxs = append(e.newTxs, rec)
	w := e.shards[s]
	w.txs = append(w.txs, tx)
	w.outcomes = append(w.outcomes, tx.Hash)
	w.gasUsed += sendGas
	w.burnt = add(w.burnt, burnt)
	if sir {
		// A local receipt executes in the chunk that converted it.
		return e.execReceipt(s, r)
	}
	c.outgoing[s] = append(c.outgoing[s], r)
	return nil
}

func (e *executor) proof(id string) []near.MerklePathItem {
	dir := "Right"
	if hashBytes([]byte(id))[0]&1 == 1 {
		dir = "Left"
	}
	return []near.MerklePathItem{{Hash: hashOf([]byte("proof"), []byte(id)), Direction: dir}}
}

func successReceipt(id string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"SuccessReceiptId": id})
	return b
}

func successValue(v []byte) json.RawMessage {
	b, _ := json.Marshal(map[string][]byte{"SuccessValue": v})
	if v == nil {
		return json.RawMessage(`{"SuccessValue":""}`)
	}
	return b
}

// actionError is a receipt failure: {"Failure": {"ActionError": {"index": i, "kind": kind}}}.
func actionError(index int, kind any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"Failure": map[string]any{"ActionError": map[string]any{"index": index, "kind": kind}}})
	return b
}

// receiptResult is what executing a receipt's actions produced.
type receiptResult struct {
	status   json.RawMessage
	value    []byte // the returned value (for data receipts)
	logs     []string
	fnGas    uint64 // gas burnt inside contracts
	receipts []*receiptRecord
	returned *receiptRecord   // the promise the call returned, if any
	data     []*receiptRecord // data receipts (not listed in the outcome)
	// distributions are global contract distribution receipts (not listed
	// in the outcome: they have none).
	distributions []*receiptRecord
	burnt         near.U128 // tokens burnt beyond gas (global deployments)
	failed        bool
	// unburnt is gas counted in the actions' execution fees that was not
	// burnt (a Delegate's nested fees: prepaid for the receipt it makes,
	// or refunded when it failed); forwarded is the gas prepaid for the
	// receipt a Delegate made, neither burnt nor refunded here.
	unburnt, forwarded uint64
}

// receiveData stores a data receipt's payload and runs the receipt that
// waited for it once it has all its inputs.
func (e *executor) receiveData(s int, d *near.DataReceiptView) error {
	c := e.c
	c.execMu.Lock()
	c.received[d.DataID] = d.Data
	r := c.postponed[d.DataID]
	delete(c.postponed, d.DataID)
	c.execMu.Unlock()
	if r == nil {
		return nil
	}
	return e.execReceipt(s, r)
}

func (e *executor) execReceipt(s int, r *receiptRecord) error {
	c := e.c
	if d := r.view.Receipt.Data; d != nil {
		return e.receiveData(s, d)
	}
	if r.dist != nil {
		e.applyDistribution(s, r)
		return nil
	}
	act := r.view.Receipt.Action
	if act == nil {
		return nil
	}
	// A receipt waiting for data (a callback) runs once all of it arrived.
	c.execMu.Lock()
	for _, id := range act.InputDataIDs {
		if _, ok := c.received[id]; !ok {
			c.postponed[id] = r
			c.execMu.Unlock()
			return nil
		}
	}
	c.execMu.Unlock()
	cause := near.StateChangeCauseView{Type: "receipt_processing", ReceiptHash: r.view.ReceiptID}
	isRefund := r.view.PredecessorID == systemAccount
	res, err := e.applyActions(r)
	if err != nil {
		return err
	}
	execGas := feeReceipt.exec
	for _, a := range act.Actions {
		_, eg := actionFees(a, act.SignerID == r.view.ReceiverID)
		execGas += eg
	}
	gasBurnt := execGas + res.fnGas - res.unburnt
	if isRefund {
		gasBurnt = 0
	}
	gasTokens := mul(act.GasPrice, gasBurnt)
	tokens := add(gasTokens, res.burnt)
	e.commit(cause)

	// The contract's share of the gas its code burnt.
	if res.fnGas > 0 && !res.failed {
		if acc := c.st.accountAt(r.view.ReceiverID, e.height); acc != nil {
			reward := mul(act.GasPrice, res.fnGas*3/10)
			a := *acc
			a.Amount = add(a.Amount, reward)
			e.setAccount(r.view.ReceiverID, &a)
			e.commit(near.StateChangeCauseView{Type: "action_receipt_gas_reward", ReceiptHash: r.view.ReceiptID})
		}
	}
	// Refunds: unused prepaid gas, and the deposit of a failed receipt.
	if !isRefund {
		paid := mul(r.pessimistic, r.prepaidGas)
		if refund := sub(sub(paid, gasTokens), mul(r.pessimistic, res.forwarded)); !refund.IsZero() {
			res.receipts = append(res.receipts, e.refundReceipt(r, act.SignerID, refund, 0))
		}
		if res.failed {
			if dep := depositOf(act.Actions); !dep.IsZero() {
				res.receipts = append(res.receipts, e.refundReceipt(r, r.view.PredecessorID, dep, 1))
			}
		}
	}
	// The result goes to the receipts waiting for it, unless the call
	// returned a promise: then that promise's receipt inherits them.
	if len(act.OutputDataReceivers) > 0 {
		if res.returned != nil {
			ra := res.returned.view.Receipt.Action
			ra.OutputDataReceivers = append(ra.OutputDataReceivers, act.OutputDataReceivers...)
		} else {
			var data *[]byte
			if !res.failed {
				v := append([]byte{}, res.value...)
				data = &v
			}
			for i, dr := range act.OutputDataReceivers {
				res.data = append(res.data, &receiptRecord{txHash: r.txHash, view: near.ReceiptView{
					PredecessorID: r.view.ReceiverID, ReceiverID: dr.ReceiverID,
					ReceiptID: hashOf([]byte("datareceipt"), []byte(r.view.ReceiptID), u64bytes(uint64(i))),
					Receipt:   near.ReceiptEnumView{Data: &near.DataReceiptView{DataID: dr.DataID, Data: data}},
				}})
			}
		}
	}
	for _, dr := range res.data {
		c.outgoing[s] = append(c.outgoing[s], dr)
	}
	c.outgoing[s] = append(c.outgoing[s], res.distributions...)
	ids := make([]string, 0, len(res.receipts))
	for _, nr := range res.receipts {
		ids = append(ids, nr.view.ReceiptID)
		c.execMu.Lock()
		c.receipts[nr.view.ReceiptID] = nr
		c.execMu.Unlock()
		if isYield(nr) { // an instant receipt: waits here, in no chunk
			e.holdYield(nr)
			e.instantReceipts = append(e.instantReceipts, nr)
			continue
		}
		c.outgoing[s] = append(c.outgoing[s], nr)
	}
	logs := res.logs
	if logs == nil {
		logs = []string{}
	}
	r.executed = true
	r.height = e.height
	r.outcome = near.ExecutionOutcomeWithIDView{
		Proof: e.proof(r.view.ReceiptID), ID: r.view.ReceiptID,
		Outcome: near.ExecutionOutcomeView{
			Logs: logs, ReceiptIDs: ids, GasBurnt: gasBurnt, TokensBurnt: tokens,
			ExecutorID: r.view.ReceiverID, Status: res.status, Metadata: json.RawMessage(receiptMetadata(c.layout.protocol)),
		},
	}
	e.executedReceipts = append(e.executedReceipts, r)
	w := e.shards[s]
	w.outcomes = append(w.outcomes, r.view.ReceiptID)
	w.gasUsed += gasBurnt
	w.burnt = add(w.burnt, tokens)
	return nil
}

const systemAccount = "system"

func depositOf(actions []near.ActionView) near.U128 {
	d := near.U128{}
	for _, a := range actions {
		if a.Transfer != nil {
			d = add(d, a.Transfer.Deposit)
		}
		if a.FunctionCall != nil {
			d = add(d, a.FunctionCall.Deposit)
		}
		if a.Delegate != nil { // the relayer attached the nested deposits
			d = add(d, depositOf(a.Delegate.DelegateAction.Actions))
		}
	}
	return d
}

// refundReceipt makes a balance refund from "system" to receiver.
func (e *executor) refundReceipt(parent *receiptRecord, receiver string, amount near.U128, n int) *receiptRecord {
	id := hashOf([]byte("refund"), []byte(parent.view.ReceiptID), u64bytes(uint64(n)))
	return &receiptRecord{
		txHash: parent.txHash,
		view: near.ReceiptView{
			PredecessorID: systemAccount, ReceiverID: receiver, ReceiptID: id,
			Receipt: near.ReceiptEnumView{Action: &near.ActionReceiptView{
				SignerID: systemAccount, SignerPublicKey: "ed25519:" + zeroHash, GasPrice: near.U128{},
				OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{},
				Actions: []near.ActionView{{Transfer: &near.TransferAction{Deposit: amount}}},
			}},
		},
	}
}

// txHash hashes a transaction's signed fields; a deployed contract enters
// by its code hash, so hashing stays cheap.
func txHash(tx near.SignedTransactionView) string {
	parts := [][]byte{[]byte("tx"), []byte(tx.SignerID), []byte(tx.PublicKey), u64bytes(tx.Nonce), []byte(tx.ReceiverID)}
	for _, a := range tx.Actions {
		if a.DeployContract != nil {
			h := near.HashOf(a.DeployContract.Code)
			parts = append(parts, []byte("deploy"), h[:])
			continue
		}
		b, _ := json.Marshal(a)
		parts = append(parts, b)
	}
	return hashOf(parts...)
}

// epochRewards pays the validators at the first block of an epoch, as
// nearcore's validator accounts update does.
func (e *executor) epochRewards() {
	c := e.c
	for i, v := range c.validators {
		acc := c.st.accountAt(v.account, e.height)
		if acc == nil {
			continue
		}
		a := *acc
		reward := milliNEAR(1000 + uint64(i)*250)
		a.Amount = add(a.Amount, reward)
		c.totalSupply = add(c.totalSupply, reward)
		e.setAccount(v.account, &a)
	}
	e.commit(near.StateChangeCauseView{Type: "validator_accounts_update"})
}
