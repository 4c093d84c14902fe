package realchain

import (
	"cmp"
	"maps"
	"slices"
)

// document is what pairing reads of a block document.
type document struct {
	Block struct {
		Header struct {
			Height           uint64 `json:"height"`
			Hash             string `json:"hash"`
			PrevHash         string `json:"prev_hash"`
			LastFinalBlock   string `json:"last_final_block"`
			LastDSFinalBlock string `json:"last_ds_final_block"`
			TimestampNanosec string `json:"timestamp_nanosec"`
		} `json:"header"`
	} `json:"block"`
	Shards []struct {
		ShardID      uint64 `json:"shard_id"`
		StateChanges []struct {
			Type   string `json:"type"`
			Change struct {
				AccountID string `json:"account_id"`
			} `json:"change"`
		} `json:"state_changes"`
		Chunk *struct {
			Transactions []struct {
				Transaction struct {
					Hash       string `json:"hash"`
					SignerID   string `json:"signer_id"`
					ReceiverID string `json:"receiver_id"`
				} `json:"transaction"`
				Outcome struct {
					ExecutionOutcome outcomeJSON `json:"execution_outcome"`
				} `json:"outcome"`
			} `json:"transactions"`
			Receipts      []receiptJSON `json:"receipts"`
			LocalReceipts []receiptJSON `json:"local_receipts"`
		} `json:"chunk"`
		ReceiptExecutionOutcomes []struct {
			ExecutionOutcome outcomeJSON `json:"execution_outcome"`
			Receipt          receiptJSON `json:"receipt"`
		} `json:"receipt_execution_outcomes"`
	} `json:"shards"`
}

type outcomeJSON struct {
	Outcome struct {
		ReceiptIDs []string `json:"receipt_ids"`
		Logs       []string `json:"logs"`
	} `json:"outcome"`
}

type receiptJSON struct {
	ReceiptID     string `json:"receipt_id"`
	PredecessorID string `json:"predecessor_id"`
	ReceiverID    string `json:"receiver_id"`
	Receipt       struct {
		Action *struct {
			SignerID string `json:"signer_id"`
		} `json:"Action"`
	} `json:"receipt"`
}

// slot is a receipt of the template that executes (or, incoming only,
// arrives) in it: in the next copies it becomes a receipt the previous copy
// created.
type slot struct {
	id, pred, recv, signer string
	created                []string // ids its outcome creates
	logs                   int
	executes               bool
	inBlock                bool // created in the block itself: it keeps its id
	orphan                 bool // created by no receipt of the chain
	taken                  bool // paired with a created receipt
}

// creator is who made a created receipt: the predecessor its receipt
// gets, the accounts a refund of it may go to, and for a transaction's
// receipt, the transaction's receiver.
type creator struct {
	account string
	refund  [2]string
	txRecv  string
}

type txInfo struct {
	hash, signer, recv string
	created            []string
}

// pairing is the template's receipt graph while receipts are paired.
type pairing struct {
	slots    []slot
	executed int            // slots[:executed] execute
	byID     map[string]int // slot by receipt id
	txs      []txInfo
	made     map[string]creator // created receipt id -> who made it
	next     map[string]int     // created receipt id -> the slot it becomes in the next copy
	opens    [][]string         // per executed slot, open(its created)
}

// pair decides, once for every copy, which receipt slot of copy k+1 each
// receipt created in copy k becomes (Template.pairs), so that each
// transaction's receipts run in the copies after it; and which transaction
// each executed receipt belongs to (Template.executed).
//
// A receipt that executes in the block that created it keeps its id. The
// others are paired so that every transaction's receipts all execute (its
// status becomes FINAL) and as many executed receipts as possible belong to
// a transaction (their outcomes, events and activity are stored with its
// status):
//
//  1. A block creates more receipts than it executes or fewer; the
//     surplus of what executed receipts create over what they use up is
//     set apart first: receipts creating the most (and logging the least)
//     become orphans, receipts no transaction of the chain made, until the
//     rest is balanced with the transactions' own receipts.
//  2. Each transaction's receipts are paired breadth first with executed
//     receipts from their creator's account (the predecessor; "system"
//     refunds to the creating receipt's predecessor or signer), preferring
//     those that keep its open receipts few, until none is open.
//  3. Receipts left are spliced into the transactions' trees: a receipt
//     creating k goes between a pair, with k-1 receipts creating nothing.
//  4. What orphans create, and anything left, is paired with the chunks'
//     incoming receipts that do not execute in the block, then left: it
//     never executes.
func (t *Template) pair(d *document) {
	p := newPairing(d)
	st := Stats{Transactions: len(p.txs), Executed: p.executed, IncomingOnly: len(p.slots) - p.executed}
	for _, s := range p.slots {
		if s.inBlock {
			st.SameBlock++
		}
	}
	p.setOrphansApart()
	p.growTrees()
	p.splice()
	for j := range p.executed {
		if s := &p.slots[j]; !s.inBlock && !s.taken {
			s.orphan = true
		}
	}
	p.pairIncoming()

	roots := p.walk()
	for _, id := range p.createdIDs() {
		st.Created++
		if j, ok := p.next[id]; ok {
			if p.slots[j].executes {
				st.Paired++
			} else {
				st.PairedIncoming++
			}
			if p.score(id, j) > 0 {
				st.ByAccount++
			}
		}
	}
	for _, s := range p.slots[:p.executed] {
		if s.orphan {
			st.Orphans++
		}
	}
	for i, tx := range p.txs {
		t.txs = append(t.txs, tx.hash)
		t.signers = append(t.signers, tx.signer)
		if roots.complete[i] {
			st.Complete++
		}
	}
	for id, j := range p.next {
		t.pairs[p.slots[j].id] = id
	}
	for j := range p.executed {
		t.executed = append(t.executed, executedTx{root: roots.root[j], depth: roots.depth[j]})
		if roots.root[j] >= 0 {
			st.MaxDepth = max(st.MaxDepth, roots.depth[j])
			st.InTransactions++
		}
	}
	t.stats = st
}

func newPairing(d *document) *pairing {
	p := &pairing{byID: map[string]int{}, made: map[string]creator{}, next: map[string]int{}}
	for _, sh := range d.Shards {
		if sh.Chunk != nil {
			for _, tx := range sh.Chunk.Transactions {
				p.txs = append(p.txs, txInfo{tx.Transaction.Hash, tx.Transaction.SignerID, tx.Transaction.ReceiverID,
					tx.Outcome.ExecutionOutcome.Outcome.ReceiptIDs})
			}
		}
		for _, o := range sh.ReceiptExecutionOutcomes {
			r := o.Receipt
			s := slot{id: r.ReceiptID, pred: r.PredecessorID, recv: r.ReceiverID, executes: true,
				created: o.ExecutionOutcome.Outcome.ReceiptIDs, logs: len(o.ExecutionOutcome.Outcome.Logs)}
			if r.Receipt.Action != nil {
				s.signer = r.Receipt.Action.SignerID
			}
			p.byID[s.id] = len(p.slots)
			p.slots = append(p.slots, s)
		}
	}
	p.executed = len(p.slots)
	for _, sh := range d.Shards {
		if sh.Chunk == nil {
			continue
		}
		for _, list := range [][]receiptJSON{sh.Chunk.Receipts, sh.Chunk.LocalReceipts} {
			for _, r := range list {
				if _, ok := p.byID[r.ReceiptID]; !ok {
					p.byID[r.ReceiptID] = len(p.slots)
					p.slots = append(p.slots, slot{id: r.ReceiptID, pred: r.PredecessorID, recv: r.ReceiverID})
				}
			}
		}
	}
	for _, tx := range p.txs {
		for _, id := range tx.created {
			p.made[id] = creator{account: tx.signer, txRecv: tx.recv}
		}
	}
	for j := range p.executed {
		s := &p.slots[j]
		for _, id := range s.created {
			p.made[id] = creator{account: s.recv, refund: [2]string{s.pred, s.signer}}
		}
	}
	for id := range p.made {
		if j, ok := p.inBlock(id); ok {
			p.slots[j].inBlock = true
		}
	}
	for j := range p.executed {
		p.opens = append(p.opens, p.open(p.slots[j].created))
	}
	return p
}

// inBlock returns the slot that executes id in its own block.
func (p *pairing) inBlock(id string) (int, bool) {
	j, ok := p.byID[id]
	return j, ok && j < p.executed
}

// open lists the receipts ids create that run in later copies, following
// those that run in the block itself.
func (p *pairing) open(ids []string) []string {
	var out []string
	for _, id := range ids {
		if j, ok := p.inBlock(id); ok {
			out = append(out, p.open(p.slots[j].created)...)
			continue
		}
		out = append(out, id)
	}
	return out
}

// units are the executed slots that can be paired: not created in the block.
func (p *pairing) units() []int {
	var out []int
	for j := range p.executed {
		if !p.slots[j].inBlock {
			out = append(out, j)
		}
	}
	return out
}

// score ranks slot j for created receipt id: 2 when j comes from its
// creator's account (3 from a transaction's signer to its receiver), else 0.
func (p *pairing) score(id string, j int) int {
	c, s := p.made[id], &p.slots[j]
	switch {
	case c.txRecv != "" && s.pred == c.account && s.recv == c.txRecv:
		return 3
	case s.pred == c.account:
		return 2
	case s.pred == "system" && (s.recv == c.refund[0] || s.recv == c.refund[1]):
		return 2
	}
	return 0
}

// setOrphansApart marks orphans until what the remaining units create,
// with the transactions' receipts, is what they use up.
func (p *pairing) setOrphansApart() {
	surplus := 0
	for _, tx := range p.txs {
		surplus += len(p.open(tx.created))
	}
	units := p.units()
	for _, j := range units {
		surplus += len(p.opens[j]) - 1
	}
	slices.SortStableFunc(units, func(a, b int) int {
		return cmp.Or(cmp.Compare(len(p.opens[b]), len(p.opens[a])),
			cmp.Compare(p.slots[a].logs, p.slots[b].logs))
	})
	for _, j := range units {
		extra := len(p.opens[j]) - 1
		if surplus <= 0 || extra <= 0 {
			break
		}
		p.slots[j].orphan = true
		surplus -= extra
	}
}

// take pairs created receipt id with slot j.
func (p *pairing) take(id string, j int) {
	p.next[id] = j
	p.slots[j].taken = true
}

// free lists the units neither paired nor orphans.
func (p *pairing) free() []int {
	var out []int
	for _, j := range p.units() {
		if s := &p.slots[j]; !s.taken && !s.orphan {
			out = append(out, j)
		}
	}
	return out
}

// growTrees pairs each transaction's receipts, breadth first.
func (p *pairing) growTrees() {
	const openCap = 2
	for _, tx := range p.txs {
		queue := p.open(tx.created)
		for len(queue) > 0 {
			id := queue[0]
			queue = queue[1:]
			best, bestScore := -1, 0
			for _, j := range p.free() {
				sc := 10 * p.score(id, j)
				if len(queue)+len(p.opens[j]) > openCap {
					sc -= 100
				}
				if best < 0 || sc > bestScore {
					best, bestScore = j, sc
				}
			}
			if best < 0 {
				continue // nothing left: it never executes
			}
			p.take(id, best)
			queue = append(queue, p.opens[best]...)
		}
	}
}

// splice puts the units left into the transactions' trees: one creating
// k receipts between a created receipt and its slot, the first of its
// receipts becoming that slot, the others k-1 units creating nothing.
func (p *pairing) splice() {
	for {
		var branch, ends []int
		for _, j := range p.free() {
			if len(p.opens[j]) == 0 {
				ends = append(ends, j)
			} else {
				branch = append(branch, j)
			}
		}
		x := -1
		for _, j := range branch {
			if len(p.opens[j])-1 <= len(ends) {
				x = j
				break
			}
		}
		if x < 0 {
			return
		}
		// The pair to cut: the best fit of x after its creator and before
		// its slot, in the shallowest tree (each cut makes one deeper).
		xs := p.opens[x]
		tr := p.walk()
		height := make([]int, len(p.txs))
		for j, r := range tr.root {
			if r >= 0 {
				height[r] = max(height[r], tr.depth[j])
			}
		}
		cut, cutScore := "", 0
		for _, id := range slices.Sorted(maps.Keys(p.next)) {
			e := p.next[id]
			if e >= p.executed || tr.root[e] < 0 {
				continue
			}
			sc := p.score(id, x) + p.score(xs[0], e) - 2*height[tr.root[e]]
			if cut == "" || sc > cutScore {
				cut, cutScore = id, sc
			}
		}
		if cut == "" {
			return
		}
		was := p.next[cut]
		p.take(cut, x)
		p.next[xs[0]] = was
		for i, id := range xs[1:] {
			p.take(id, ends[i])
		}
	}
}

// pairIncoming pairs the created receipts still unpaired with the incoming
// receipts that do not execute, creator's account first.
func (p *pairing) pairIncoming() {
	var left []string
	for _, id := range p.createdIDs() {
		if _, ok := p.next[id]; !ok {
			left = append(left, id)
		}
	}
	for j := p.executed; j < len(p.slots) && len(left) > 0; j++ {
		best := 0
		for i, id := range left {
			if p.score(id, j) > 0 {
				best = i
				break
			}
		}
		p.take(left[best], j)
		left = slices.Delete(left, best, best+1)
	}
}

// createdIDs lists the receipts the block creates that run in later
// copies, in document order.
func (p *pairing) createdIDs() []string {
	var out []string
	for _, tx := range p.txs {
		out = append(out, tx.created...)
	}
	for _, s := range p.slots[:p.executed] {
		out = append(out, s.created...)
	}
	return slices.DeleteFunc(out, func(id string) bool { _, ok := p.inBlock(id); return ok })
}

// trees is, per executed slot, the transaction it belongs to (-1: none)
// and how many copies after it it runs; per transaction, whether every
// receipt of it executes.
type trees struct {
	root, depth []int
	complete    []bool
}

func (p *pairing) walk() trees {
	tr := trees{root: make([]int, p.executed), depth: make([]int, p.executed), complete: make([]bool, len(p.txs))}
	for j := range tr.root {
		tr.root[j] = -1
	}
	type item struct {
		id    string
		depth int
	}
	for i, tx := range p.txs {
		done := true
		var queue []item
		for _, id := range tx.created {
			queue = append(queue, item{id, 0})
		}
		for len(queue) > 0 {
			it := queue[0]
			queue = queue[1:]
			j, ok := p.inBlock(it.id)
			depth := it.depth
			if !ok {
				j, ok = p.next[it.id]
				depth++
			}
			if !ok || j >= p.executed || tr.root[j] >= 0 {
				done = false // never executes (or, malformed, twice)
				continue
			}
			tr.root[j], tr.depth[j] = i, depth
			for _, id := range p.slots[j].created {
				queue = append(queue, item{id, depth})
			}
		}
		tr.complete[i] = done
	}
	return tr
}
