package rpcserve

import (
	"context"
	"encoding/json"

	"github.com/nearline/nearline/near"
)

// Backend answers NEAR's read methods. The archive (Postgres) and the
// simulator both implement it, so both speak through one protocol layer:
// the same routing, parameter parsing, envelopes and limits.
//
// A method returns a *near.Error (possibly wrapped) for any condition the
// client should see (UNKNOWN_BLOCK, UNKNOWN_ACCOUNT, ...); any other error is
// logged and answered as a generic INTERNAL_ERROR, never shown as text.
type Backend interface {
	// Block returns the `block` result for ref.
	Block(ctx context.Context, ref near.BlockReference) (json.RawMessage, error)
	// Chunk returns the `chunk` result.
	Chunk(ctx context.Context, req near.ChunkRequest) (json.RawMessage, error)
	// CongestionLevel returns the `EXPERIMENTAL_congestion_level` result of
	// the chunk req selects (as for Chunk, with Chunk's errors).
	CongestionLevel(ctx context.Context, req near.ChunkRequest) (*near.CongestionLevelView, error)
	// BlockEffects returns the `EXPERIMENTAL_changes_in_block` result.
	BlockEffects(ctx context.Context, ref near.BlockReference) (*near.BlockEffectsView, error)
	// Changes returns the `EXPERIMENTAL_changes` result.
	Changes(ctx context.Context, req near.ChangesRequest) (*near.ChangesView, error)
	// Query returns a `query` result (near.AccountView, near.ContractCodeView,
	// near.ViewStateResult, near.AccessKeyResult, near.AccessKeyListView or
	// near.CallResult).
	Query(ctx context.Context, req near.QueryRequest) (any, error)
	// GasPrice returns the gas price at id, or at the latest block for nil.
	GasPrice(ctx context.Context, id *near.BlockID) (*near.GasPriceView, error)
	// GenesisConfig returns the `genesis_config` result.
	GenesisConfig(ctx context.Context) (json.RawMessage, error)
	// ProtocolConfig returns the `EXPERIMENTAL_protocol_config` result.
	ProtocolConfig(ctx context.Context, ref near.BlockReference) (json.RawMessage, error)
	// Status returns the `status` result.
	Status(ctx context.Context) (json.RawMessage, error)
	// Health returns nil when healthy; its error is the `health` error.
	Health(ctx context.Context) error
	// Tx returns the `tx` result, or with withReceipts the
	// `EXPERIMENTAL_tx_status` result.
	Tx(ctx context.Context, req near.TxRequest, withReceipts bool) (json.RawMessage, error)
	// Receipt returns the `EXPERIMENTAL_receipt` result: the receipt with
	// that id as the upstream served it.
	Receipt(ctx context.Context, receiptID string) (json.RawMessage, error)
	// ReceiptToTx returns the `EXPERIMENTAL_receipt_to_tx` result: the
	// transaction a receipt descends from and its sender.
	ReceiptToTx(ctx context.Context, receiptID string) (*near.ReceiptToTxView, error)
	// Validators returns the `validators` result for its raw params.
	Validators(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
}

// NodeBackend is a Backend that is a node itself (the simulator), not an
// archive in front of one. NodeMethod answers the node-only methods the
// handler never routes to a Backend otherwise (network_info, send_tx,
// the light client methods, ...); for one it cannot answer it returns a
// *ForwardError, which is forwarded or refused as any Backend's.
type NodeBackend interface {
	Backend
	NodeMethod(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}
