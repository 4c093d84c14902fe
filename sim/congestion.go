package sim

import (
	"context"
	"fmt"

	"github.com/nearline/nearline/near"
)

// CongestionLevel answers `EXPERIMENTAL_congestion_level`: the level of the
// congestion_info in the header of the chunk `chunk` would return, under
// the chain's congestion control config.
func (n *Node) CongestionLevel(_ context.Context, req near.ChunkRequest) (*near.CongestionLevelView, error) {
	return readView(n, n.chain.chunkFor, req, func(ch *chunk) (*near.CongestionLevelView, error) {
		cfg, err := near.CongestionConfigOf(n.chain.layoutAt(ch.height).config)
		if err != nil {
			return nil, fmt.Errorf("read congestion control config: %w", err)
		}
		return &near.CongestionLevelView{CongestionLevel: near.F64(near.CongestionLevel(ch.view.Header.CongestionInfo, cfg))}, nil
	})
}

// receiptBaseBytes is the size the simulator counts for a receipt beside its
// account ids, actions and payloads.
const receiptBaseBytes = 100

// congestionInfo is shard s's congestion after applying its chunk at this
// height, from its real queues, in nearcore's shape: delayed_receipts_gas
// the gas of receipts waiting to execute on s, buffered_receipts_gas the
// gas of the receipts s made that its next chunk will carry, receipt_bytes
// the size of those and of the receipts postponed on s waiting for data;
// allowed_shard the next shard of the layout round robin. Like gas_used, it is reported
// by the shard's next chunk header. Only deterministic state is read, so
// the chain stays a function of its Config.
func (c *chain) congestionInfo(s int) near.CongestionInfo {
	ids := c.layout.ids
	info := near.CongestionInfo{AllowedShard: uint16(ids[(s+1)%len(ids)])}
	var delayed, buffered uint64
	for _, r := range c.incoming[s] {
		delayed += r.prepaidGas
		info.ReceiptBytes += receiptBytes(r.view)
	}
	for _, r := range c.outgoing[s] {
		buffered += r.prepaidGas
		info.ReceiptBytes += receiptBytes(r.view)
	}
	seen := map[string]bool{}
	for _, r := range c.postponed {
		if !seen[r.view.ReceiptID] && c.shardOf(r.view.ReceiverID) == s {
			seen[r.view.ReceiptID] = true
			info.ReceiptBytes += receiptBytes(r.view)
		}
	}
	info.DelayedReceiptsGas, info.BufferedReceiptsGas = near.U128From64(delayed), near.U128From64(buffered)
	return info
}

// receiptBytes is the size the simulator counts for a receipt.
func receiptBytes(r near.ReceiptView) uint64 {
	n := receiptBaseBytes + len(r.PredecessorID) + len(r.ReceiverID)
	if d := r.Receipt.Data; d != nil && d.Data != nil {
		n += len(*d.Data)
	}
	if a := r.Receipt.Action; a != nil {
		for _, act := range a.Actions {
			n += 64
			if act.FunctionCall != nil {
				n += len(act.FunctionCall.MethodName) + len(act.FunctionCall.Args)
			}
		}
	}
	return uint64(n)
}
