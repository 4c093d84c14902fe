package sim

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
)

var _ rpcserve.NodeBackend = (*Node)(nil)

// networkInfo is nearcore's `network_info` result (RpcNetworkInfoResponse).
type networkInfo struct {
	ActivePeers         []peerInfo      `json:"active_peers"`
	NumActivePeers      int             `json:"num_active_peers"`
	PeerMaxCount        uint32          `json:"peer_max_count"`
	SentBytesPerSec     uint64          `json:"sent_bytes_per_sec"`
	ReceivedBytesPerSec uint64          `json:"received_bytes_per_sec"`
	KnownProducers      []knownProducer `json:"known_producers"`
}

type peerInfo struct {
	ID        string  `json:"id"`
	Addr      *string `json:"addr"`
	AccountID *string `json:"account_id"`
}

type knownProducer struct {
	AccountID string  `json:"account_id"`
	Addr      *string `json:"addr"`
	PeerID    string  `json:"peer_id"`
}

// peerMaxCount is nearcore's default max_num_peers.
const peerMaxCount = 40

// NodeMethod answers the node-only methods a simulated node can, as the
// node it stands for would: network_info, for a node with no peers that
// knows the chain's validators as producers. The others (send_tx, the
// light client methods, ...) are NOT_SERVED, saying it is the simulator.
func (n *Node) NodeMethod(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	if method != "network_info" {
		return nil, &rpcserve.ForwardError{Reason: near.HandlerError("NOT_SERVED", map[string]string{"method_name": method},
			fmt.Sprintf("Method `%s` is not served by the simulated node", method))}
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	info := networkInfo{ActivePeers: []peerInfo{}, PeerMaxCount: peerMaxCount, KnownProducers: make([]knownProducer, len(n.chain.validators))}
	for i, v := range n.chain.validators {
		info.KnownProducers[i] = knownProducer{AccountID: v.account, PeerID: publicKey(n.cfg.Seed, "peer:"+v.account, 0)}
	}
	out, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("encode network info: %w", err)
	}
	return out, nil
}
