package realchain

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
	executes               bool
	taken                  bool // it has a creator: in the block, or paired
	parent                 int  // the slot whose outcome created it, -1 for none or a transaction
	root, depth            int  // see executedTx
}

// created is a receipt id an outcome of the template creates, with who
// created it: the predecessor its receipt gets, and for a refund, the
// accounts it may go to.
type created struct {
	id      string
	creator string // predecessor of the new receipt
	refund  [2]string
	txRecv  string // for a transaction's receipt: the transaction's receiver
	owner   int    // the slot that created it, -1 for a transaction
	root    int
	depth   int // copies after the transaction the creating outcome ran
}

// pair decides, once for every copy, which receipt slot of copy k+1 each
// receipt created in copy k becomes (Template.pairs), so that each
// transaction's receipts run in the copies after it; and which transaction
// each executed receipt belongs to (Template.executed).
//
// A receipt that executes in the block that created it keeps its id. Of the
// others, a transaction's receipts are paired first, one transaction at a
// time, breadth first, with the executed receipt whose predecessor is the
// creator (a refund from "system" to the creating receipt's predecessor or
// signer counts as the creator's), preferring those that keep the
// transaction's open receipts few, so that most transactions' trees close
// (every receipt executes: a FINAL status). The receipts left over are
// paired with the slots left, without cycles, then with incoming receipts
// that do not execute. A created receipt with no slot never executes.
func (t *Template) pair(d *document) {
	var slots []slot
	byID := map[string]int{}
	var txs []txInfo
	for _, sh := range d.Shards {
		if sh.Chunk != nil {
			for _, tx := range sh.Chunk.Transactions {
				txs = append(txs, txInfo{tx.Transaction.Hash, tx.Transaction.SignerID, tx.Transaction.ReceiverID,
					tx.Outcome.ExecutionOutcome.Outcome.ReceiptIDs})
			}
		}
		for _, o := range sh.ReceiptExecutionOutcomes {
			r := o.Receipt
			s := slot{id: r.ReceiptID, pred: r.PredecessorID, recv: r.ReceiverID,
				created: o.ExecutionOutcome.Outcome.ReceiptIDs, executes: true, parent: -1, root: -1}
			if r.Receipt.Action != nil {
				s.signer = r.Receipt.Action.SignerID
			}
			byID[s.id] = len(slots)
			slots = append(slots, s)
		}
	}
	executed := len(slots)
	for _, sh := range d.Shards {
		if sh.Chunk == nil {
			continue
		}
		for _, r := range append(sh.Chunk.Receipts[:len(sh.Chunk.Receipts):len(sh.Chunk.Receipts)], sh.Chunk.LocalReceipts...) {
			if _, ok := byID[r.ReceiptID]; !ok {
				byID[r.ReceiptID] = len(slots)
				slots = append(slots, slot{id: r.ReceiptID, pred: r.PredecessorID, recv: r.ReceiverID, parent: -1, root: -1})
			}
		}
	}
	st := Stats{Transactions: len(txs), Executed: executed, IncomingOnly: len(slots) - executed}
	for _, tx := range txs {
		t.txs = append(t.txs, tx.hash)
		t.signers = append(t.signers, tx.signer)
	}

	// A receipt that executes in the block that created it keeps its id
	// and its creator.
	sameBlock := func(id string) (int, bool) {
		j, ok := byID[id]
		return j, ok && slots[j].executes
	}
	for _, ids := range creations(txs, slots) {
		for _, id := range ids {
			if j, ok := sameBlock(id); ok && !slots[j].taken {
				slots[j].taken = true
				st.SameBlock++
			}
		}
	}
	// open lists the receipts owner's outcome creates that run in later
	// copies, following those that run in the block itself.
	var open func(owner, root, depth int, ids []string, c created) []created
	open = func(owner, root, depth int, ids []string, c created) []created {
		var out []created
		for _, id := range ids {
			if j, ok := sameBlock(id); ok {
				s := &slots[j]
				s.parent, s.root, s.depth = owner, root, depth
				out = append(out, open(j, root, depth, s.created, creatorOf(s))...)
				continue
			}
			c.id, c.owner, c.root, c.depth = id, owner, root, depth
			out = append(out, c)
		}
		return out
	}
	// score ranks slot s for created receipt c: 2 when s comes from c's
	// creator (3 from a transaction's signer to its receiver), else 0.
	score := func(c created, s *slot) int {
		switch {
		case c.txRecv != "" && s.pred == c.creator && s.recv == c.txRecv:
			return 3
		case s.pred == c.creator:
			return 2
		case s.pred == "system" && (s.recv == c.refund[0] || s.recv == c.refund[1]):
			return 2
		}
		return 0
	}
	var left []created
	take := func(c created, j int) []created {
		s := &slots[j]
		s.taken, s.parent, s.root, s.depth = true, c.owner, c.root, c.depth+1
		t.pairs[s.id] = c.id
		if s.executes {
			st.Paired++
		} else {
			st.PairedIncoming++
		}
		if score(c, s) > 0 {
			st.ByAccount++
		}
		return open(j, c.root, c.depth+1, s.created, creatorOf(s))
	}
	// Every transaction's receipts that run in its block come first: they
	// are no one else's to pair.
	roots := make([][]created, len(txs))
	for i, tx := range txs {
		roots[i] = open(-1, i, 0, tx.created, created{creator: tx.signer, txRecv: tx.recv})
	}
	const openCap = 2
	for i := range txs {
		queue := roots[i]
		complete := true
		for len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			best, bestScore := -1, 0
			for j := range executed {
				s := &slots[j]
				if s.taken {
					continue
				}
				sc := 10 * score(c, s)
				if n := len(queue) + len(open0(s, byID, slots)); n > openCap {
					sc -= 100
				}
				if best < 0 || sc > bestScore {
					best, bestScore = j, sc
				}
			}
			if best < 0 {
				complete = false
				left = append(left, c)
				continue
			}
			queue = append(queue, take(c, best)...)
		}
		if complete {
			st.Complete++
		}
	}
	// The slots left are receipts no transaction of the chain created:
	// pair what they create with one another, never with an ancestor.
	var queue []created
	for j := range executed {
		if !slots[j].taken {
			queue = append(queue, open(j, -1, 0, slots[j].created, creatorOf(&slots[j]))...)
		}
	}
	rootOf := func(j int) int {
		for slots[j].parent >= 0 {
			j = slots[j].parent
		}
		return j
	}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		best, bestScore := -1, -1
		for j := range executed {
			s := &slots[j]
			if s.taken || (c.owner >= 0 && rootOf(c.owner) == j) {
				continue
			}
			if sc := score(c, s); sc > bestScore {
				best, bestScore = j, sc
			}
		}
		if best < 0 {
			left = append(left, c)
			continue
		}
		take(c, best) // what it creates is in the queue already
	}
	// Incoming receipts that do not execute take what is left.
	for j := executed; j < len(slots) && len(left) > 0; j++ {
		best := 0
		for i, c := range left {
			if score(c, &slots[j]) > 0 {
				best = i
				break
			}
		}
		take(left[best], j)
		left = append(left[:best], left[best+1:]...)
	}
	for _, s := range slots {
		if s.executes && s.root >= 0 {
			st.MaxDepth = max(st.MaxDepth, s.depth)
		}
	}
	st.Created = st.Paired + st.PairedIncoming + len(left)
	for j := range executed {
		t.executed = append(t.executed, executedTx{root: slots[j].root, depth: slots[j].depth})
	}
	t.stats = st
}

// open0 counts the receipts slot s would leave open: those its outcome
// creates that do not run in the block.
func open0(s *slot, byID map[string]int, slots []slot) []string {
	var out []string
	for _, id := range s.created {
		if j, ok := byID[id]; ok && slots[j].executes {
			out = append(out, open0(&slots[j], byID, slots)...)
			continue
		}
		out = append(out, id)
	}
	return out
}

type txInfo struct {
	hash, signer, recv string
	created            []string
}

// creations lists the receipt ids each transaction and executed receipt
// creates.
func creations(txs []txInfo, slots []slot) [][]string {
	var out [][]string
	for _, tx := range txs {
		out = append(out, tx.created)
	}
	for _, s := range slots {
		out = append(out, s.created)
	}
	return out
}

// creatorOf is who the receipts slot s's outcome creates come from.
func creatorOf(s *slot) created {
	return created{creator: s.recv, refund: [2]string{s.pred, s.signer}}
}
