package sim

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/nearline/nearline/near"
)

// Global contracts, as nearcore runs them from protocol 77:
//   - DeployGlobalContract(ByAccountId) burns the code's global storage cost
//     from the deployer and starts a GlobalContractDistribution receipt
//     targeted at the deployer's own shard. Applying it on its target shard
//     stores the code there, then forwards it to the next shard (in shard id
//     order) that has not had it. The receipts travel in chunks like any
//     other, execute at the target shard's next chunk, and have no outcome.
//   - UseGlobalContract(ByAccountId) needs the code on the account's shard;
//     it drops the account's local code and makes the account's code_hash
//     the default hash, naming the global code in global_contract_hash or
//     global_contract_account_id. Calls and view_code then run that code
//     as it is on the account's shard at the time: by account id, a
//     redeploy takes over shard by shard.

// minGlobalContractsProtocol is the protocol version that introduced global
// contracts: the generator makes them only on chains at or above it.
const minGlobalContractsProtocol = 77

// globalStorageCost is what deploying n bytes of global code burns:
// nearcore's global_contract_storage_amount_per_byte (10^20 yoctoNEAR) a
// byte.
func globalStorageCost(n uint64) near.U128 {
	return mul(near.U128From64(100_000_000_000_000_000), n*1000)
}

// globalKey names a global contract in the state's maps.
func globalKey(id near.GlobalContractID) string { return id.Kind() + ":" + id.Value() }

func (s *state) putGlobal(shard uint64, id near.GlobalContractID, height uint64, code []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	putIn(s.global, shard, globalKey(id), height, deployedCode{code, near.HashOf(code).String()})
}

// globalAt returns the global code id names on shard (an id) at height,
// or nil.
func (s *state) globalAt(shard uint64, id near.GlobalContractID, height uint64) ([]byte, string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return codeAt(s.global[shard][globalKey(id)], height)
}

// contractAt returns the code an account runs at height: its own, or the
// global code it uses as that code is on its shard; nil when it has none.
func (c *chain) contractAt(id string, height uint64) ([]byte, string) {
	acc := c.st.accountAt(id, height)
	if acc == nil {
		return nil, ""
	}
	return c.codeFor(id, acc, height)
}

// codeFor is contractAt for an account already read (or being changed).
func (c *chain) codeFor(id string, acc *near.Account, height uint64) ([]byte, string) {
	if gid, ok := acc.GlobalContract(); ok {
		return c.st.globalAt(c.shardIDOf(id, height), gid, height)
	}
	return c.st.codeAt(id, height)
}

// globalIDLen is what naming id adds to an account's storage usage.
func globalIDLen(id near.GlobalContractID) uint64 {
	if id.ByAccount() {
		return uint64(len(id.AccountID))
	}
	return 32
}

// deployGlobal runs a DeployGlobalContract(ByAccountId) action of receipt r
// on account work (shard s); it returns the action's failure kind, or nil.
func (e *executor) deployGlobal(s int, r *receiptRecord, work *near.Account, code []byte, byAccount bool, res *receiptResult) any {
	id := r.view.ReceiverID
	cost := globalStorageCost(uint64(len(code)))
	if work.Amount.Cmp(cost) < 0 {
		return map[string]any{"LackBalanceForState": map[string]any{"account_id": id, "amount": cost}}
	}
	work.Amount = sub(work.Amount, cost)
	res.burnt = add(res.burnt, cost)
	gid := near.GlobalContractID{CodeHash: near.HashOf(code).String()}
	if byAccount {
		gid = near.GlobalContractID{AccountID: id}
	}
	d := near.GlobalContractDistribution{ID: gid, TargetShard: e.c.layout.ids[s], Code: code}
	res.distributions = append(res.distributions, e.distributionReceipt(id, hashOf([]byte("global"), []byte(r.view.ReceiptID)), d))
	return nil
}

func (e *executor) distributionReceipt(predecessor, receiptID string, d near.GlobalContractDistribution) *receiptRecord {
	return &receiptRecord{
		view: near.ReceiptView{
			PredecessorID: predecessor, ReceiverID: predecessor, ReceiptID: receiptID,
			Receipt: near.GlobalContractDistributionReceipt(d),
		},
		dist: &d,
	}
}

// useGlobal runs a UseGlobalContract(ByAccountId) action on account work,
// whose shard has the code (applyActions checked it).
func (e *executor) useGlobal(id string, work *near.Account, gid near.GlobalContractID) {
	c := e.c
	if old, ok := work.GlobalContract(); ok {
		work.StorageUsage -= min(work.StorageUsage, globalIDLen(old))
	} else if local, _ := c.st.codeAt(id, e.height); local != nil {
		work.StorageUsage -= min(work.StorageUsage, uint64(len(local)))
		e.setCode(id, nil)
	}
	work.StorageUsage += globalIDLen(gid)
	work.CodeHash = zeroHash
	work.Extra = near.GlobalContractExtra(gid)
}

// applyDistribution stores a distribution receipt's code on shard s and
// forwards the receipt to the next shard of the layout (in index order)
// that has not had it.
func (e *executor) applyDistribution(s int, r *receiptRecord) {
	c := e.c
	d := r.dist
	here := c.layout.ids[s]
	c.st.putGlobal(here, d.ID, e.height, d.Code)
	delivered := append(slices.Clone(d.AlreadyDeliveredShards), here)
	slices.Sort(delivered)
	delivered = slices.Compact(delivered)
	for _, next := range c.layout.ids {
		if slices.Contains(delivered, next) {
			continue
		}
		fwd := near.GlobalContractDistribution{ID: d.ID, TargetShard: next, AlreadyDeliveredShards: delivered, Code: d.Code}
		nr := e.distributionReceipt(r.view.PredecessorID, hashOf([]byte("global"), []byte(r.view.ReceiptID), u64bytes(0)), fwd)
		c.outgoing[s] = append(c.outgoing[s], nr)
		break
	}
	r.executed = true
	r.height = e.height
}

// destShard is the index of the shard a receipt executes on: a
// distribution receipt's target (the left child of a target that has split
// since), else its receiver's.
func (c *chain) destShard(r *receiptRecord) int {
	if r.dist != nil {
		target := r.dist.TargetShard
		for {
			if s, ok := c.layout.indexOf(target); ok {
				return s
			}
			child, ok := c.leftChild(target)
			if !ok {
				return 0
			}
			target = child
		}
	}
	return c.shardOf(r.view.ReceiverID)
}

// leftChild returns the first shard a shard split into.
func (c *chain) leftChild(parent uint64) (uint64, bool) {
	for _, l := range c.layouts {
		if l.parents != nil && l.split == parent {
			return l.ids[l.splitIndex], true
		}
	}
	return 0, false
}

// The generator's global contract transactions.

// globalKinds are the generator's global contract transactions, drawn on
// chains at protocol minGlobalContractsProtocol or above.
func globalKinds() []kindWeight {
	return []kindWeight{
		{2, (*generator).deployGlobal},
		{3, (*generator).useGlobal},
		{4, (*generator).callGlobal},
	}
}

// globalCodes are the contracts deployed as global code.
var globalCodes = []string{"status_message", "guestbook_rs"}

// deployGlobal deploys a contract as global code: by hash, or by the
// signer's account id (a later deploy by the same account is a redeploy).
func (g *generator) deployGlobal(h uint64) (txPlan, bool) {
	if g.c.vm == nil {
		return txPlan{}, false
	}
	name := globalCodes[g.r.IntN(len(globalCodes))]
	code, err := contractCode(name)
	if err != nil {
		return txPlan{}, false
	}
	signer := g.pickUser()
	a := near.ActionView{DeployGlobalContract: &near.DeployContractAction{Code: code}}
	byAccount := g.r.IntN(2) == 0
	if byAccount {
		a = near.ActionView{DeployGlobalContractByAccountID: &near.DeployContractAction{Code: code}}
		// Half of these are redeploys, so that new code often overtakes
		// old code on its way through the shards.
		if len(g.globalOwners) > 0 && g.r.IntN(2) == 0 {
			signer = g.globalOwners[g.r.IntN(len(g.globalOwners))]
		}
	}
	p, ok := g.plan(signer, signer, a)
	if !ok {
		return p, false
	}
	if byAccount {
		if !slices.Contains(g.globalOwners, signer) {
			g.globalOwners = append(g.globalOwners, signer)
		}
	} else if hash := near.HashOf(code).String(); !slices.Contains(g.globalHashes, hash) {
		g.globalHashes = append(g.globalHashes, hash)
	}
	return p, true
}

// useGlobal has an account run global code deployed before: a new account,
// or an existing sub-account that switches (it fails, as in nearcore, when
// the code has not reached the account's shard yet).
func (g *generator) useGlobal(h uint64) (txPlan, bool) {
	if len(g.globalHashes)+len(g.globalOwners) == 0 {
		return txPlan{}, false
	}
	var use near.ActionView
	if i := g.r.IntN(len(g.globalHashes) + len(g.globalOwners)); i < len(g.globalHashes) {
		use = near.ActionView{UseGlobalContract: &near.UseGlobalContractAction{CodeHash: g.globalHashes[i]}}
	} else {
		use = near.ActionView{UseGlobalContractByAccountID: &near.UseGlobalContractByAccountIDAction{AccountID: g.globalOwners[i-len(g.globalHashes)]}}
	}
	// A third of the time an existing sub-account switches to the global
	// code (dropping its own contract, if it has one).
	if len(g.subs) > 0 && g.r.IntN(3) == 0 {
		id := g.subs[g.r.IntN(len(g.subs))]
		p, ok := g.plan(id, id, use)
		if ok && !slices.Contains(g.globalUsers, id) {
			g.globalUsers = append(g.globalUsers, id)
		}
		return p, ok
	}
	id, p, ok := g.createSub("g", 5, use)
	if ok {
		g.globalUsers = append(g.globalUsers, id)
	}
	return p, ok
}

// callGlobal calls set_status on an account that uses global code (a
// status_message code answers it; the guestbook fails with MethodNotFound).
func (g *generator) callGlobal(h uint64) (txPlan, bool) {
	if len(g.globalUsers) == 0 {
		return txPlan{}, false
	}
	id := g.globalUsers[g.r.IntN(len(g.globalUsers))]
	if !g.exists(id) {
		return txPlan{}, false
	}
	msg, _ := json.Marshal(map[string]string{"message": words[g.r.IntN(len(words))] + " " + strconv.FormatUint(h, 10)})
	return g.plan(g.pickUser(), id, call("set_status", string(msg), 30, near.U128{}))
}
