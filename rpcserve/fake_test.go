package rpcserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nearline/nearline/near"
)

// fakeBackend is a tiny chain for protocol tests: heights 1..10 with 5
// skipped, block hash = HashOf("block-<h>"). Some heights misbehave on
// purpose: 0 is before the archive, 7 fails with a private Go error, 8
// panics, 9 blocks until the request's context ends.
type fakeBackend struct {
	unhealthy bool
}

var _ Backend = (*fakeBackend)(nil)

func fakeHash(kind string, n uint64) string {
	return near.HashOf(fmt.Appendf(nil, "%s-%d", kind, n)).String()
}

func (f *fakeBackend) height(ctx context.Context, ref near.BlockReference) (uint64, error) {
	if ref.BlockID == nil {
		return 10, nil
	}
	id := *ref.BlockID
	if !id.IsHeight() {
		for h := uint64(1); h <= 10; h++ {
			if h != 5 && fakeHash("block", h) == id.Hash {
				return h, nil
			}
		}
		return 0, near.UnknownBlock(id)
	}
	switch h := id.Height; {
	case h == 0:
		return 0, &ForwardError{Reason: BeforeArchive(0, 1)}
	case h == 5 || h > 10:
		return 0, near.UnknownBlock(id)
	case h == 7:
		return 0, fmt.Errorf("query blocks: %w", errors.New("secret database detail"))
	case h == 8:
		panic("fake backend: height 8")
	case h == 9:
		<-ctx.Done()
		return 0, fmt.Errorf("wait for block: %w", ctx.Err())
	default:
		return h, nil
	}
}

func (f *fakeBackend) Block(ctx context.Context, ref near.BlockReference) (json.RawMessage, error) {
	h, err := f.height(ctx, ref)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, `{"author":"test.near","header":{"height":%d,"hash":%q,"note":"<&>"},"chunks":[]}`, h, fakeHash("block", h)), nil
}

func (f *fakeBackend) Chunk(ctx context.Context, req near.ChunkRequest) (json.RawMessage, error) {
	if req.ChunkID != "" {
		if req.ChunkID != fakeHash("chunk", 1) {
			return nil, near.UnknownChunk(req.ChunkID)
		}
		return json.RawMessage(`{"author":"test.near","header":{"shard_id":0},"transactions":[],"receipts":[]}`), nil
	}
	if _, err := f.height(ctx, near.BlockReference{BlockID: req.BlockID}); err != nil {
		return nil, err
	}
	if req.ShardID > 1 {
		return nil, near.InvalidShardID(req.ShardID)
	}
	return fmt.Appendf(nil, `{"author":"test.near","header":{"shard_id":%d},"transactions":[],"receipts":[]}`, req.ShardID), nil
}

// CongestionLevel answers for the chunks Chunk knows: 1e-7 for the chunk
// by id, shard 1 of a block fully congested (1.0), shard 0 not (0.0).
func (f *fakeBackend) CongestionLevel(ctx context.Context, req near.ChunkRequest) (*near.CongestionLevelView, error) {
	if _, err := f.Chunk(ctx, req); err != nil {
		return nil, err
	}
	switch {
	case req.ChunkID != "":
		return &near.CongestionLevelView{CongestionLevel: 1e-7}, nil
	case req.ShardID == 1:
		return &near.CongestionLevelView{CongestionLevel: 1}, nil
	}
	return &near.CongestionLevelView{}, nil
}

func (f *fakeBackend) BlockEffects(ctx context.Context, ref near.BlockReference) (*near.BlockEffectsView, error) {
	h, err := f.height(ctx, ref)
	if err != nil {
		return nil, err
	}
	view := &near.BlockEffectsView{BlockHash: fakeHash("block", h)}
	if h == 3 {
		view.Changes = []near.StateChangeKindView{{Type: near.EffectAccountTouched, AccountID: "alice.near"}}
	}
	return view, nil
}

func (f *fakeBackend) Changes(ctx context.Context, req near.ChangesRequest) (*near.ChangesView, error) {
	h, err := f.height(ctx, req.Block)
	if err != nil {
		return nil, err
	}
	view := &near.ChangesView{BlockHash: fakeHash("block", h)}
	for _, id := range req.AccountIDs {
		view.Changes = append(view.Changes, near.StateChangeWithCauseView{
			Cause:  near.StateChangeCauseView{Type: "transaction_processing", TxHash: fakeHash("tx", 1)},
			Type:   near.ChangeAccountUpdate,
			Change: near.StateChangeValue{AccountID: id, Account: &near.Account{Amount: near.U128From64(5), CodeHash: "11111111111111111111111111111111"}},
		})
	}
	return view, nil
}

func (f *fakeBackend) Query(ctx context.Context, req near.QueryRequest) (any, error) {
	h, err := f.height(ctx, req.Block)
	if err != nil {
		if nerr := (*near.Error)(nil); errors.As(err, &nerr) && nerr.CauseName() == "UNKNOWN_BLOCK" {
			var fwd *ForwardError
			if !errors.As(err, &fwd) {
				return nil, near.QueryUnknownBlock(req.Block)
			}
		}
		return nil, err
	}
	at := near.BlockStamp{BlockHeight: h, BlockHash: fakeHash("block", h)}
	if req.AccountID == "missing.near" {
		return nil, near.UnknownAccount(req.AccountID, at)
	}
	switch req.RequestType {
	case near.QueryViewAccount:
		return near.AccountView{Account: near.Account{Amount: near.U128From64(100), CodeHash: "11111111111111111111111111111111", StorageUsage: 182}, BlockStamp: at}, nil
	case near.QueryViewState:
		return near.ViewStateResult{Values: []near.StateItem{{Key: req.Prefix, Value: []byte("v")}}, BlockStamp: at}, nil
	case near.QueryViewAccessKey:
		return nil, near.UnknownAccessKey(req.PublicKey, at)
	case near.QueryCallFunction:
		if req.MethodName == "nocode" {
			return nil, near.CodeDoesNotExist(req.AccountID, at)
		}
		return near.CallResult{Result: near.ByteArray(req.Args), Logs: []string{"called " + req.MethodName}, BlockStamp: at}, nil
	}
	return nil, near.NoContractCode(req.AccountID, at)
}

func (f *fakeBackend) GasPrice(ctx context.Context, id *near.BlockID) (*near.GasPriceView, error) {
	ref := near.BlockReference{BlockID: id}
	if id == nil {
		ref.Finality = near.FinalityFinal
	}
	h, err := f.height(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &near.GasPriceView{GasPrice: near.U128From64(100000000 + h)}, nil
}

func (f *fakeBackend) GenesisConfig(context.Context) (json.RawMessage, error) {
	return json.RawMessage(`{"chain_id": "fakenet", "genesis_height": 1}`), nil
}

func (f *fakeBackend) ProtocolConfig(ctx context.Context, ref near.BlockReference) (json.RawMessage, error) {
	h, err := f.height(ctx, ref)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, `{"chain_id":"fakenet","protocol_version":73,"at":%d}`, h), nil
}

func (f *fakeBackend) Status(context.Context) (json.RawMessage, error) {
	return json.RawMessage(`{"chain_id":"fakenet","sync_info":{"latest_block_height":10,"syncing":false}}`), nil
}

func (f *fakeBackend) Health(context.Context) error {
	if f.unhealthy {
		return near.NotSyncedYet()
	}
	return nil
}

func (f *fakeBackend) Tx(_ context.Context, req near.TxRequest, withReceipts bool) (json.RawMessage, error) {
	if req.TxHash != fakeHash("tx", 1) {
		return nil, near.UnknownTransaction(req.TxHash)
	}
	return fmt.Appendf(nil, `{"final_execution_status":"FINAL","with_receipts":%t}`, withReceipts), nil
}

// Receipt knows one receipt, HashOf("receipt-1"); any other is unknown, and
// may be known upstream.
func (f *fakeBackend) Receipt(_ context.Context, receiptID string) (json.RawMessage, error) {
	if receiptID != fakeHash("receipt", 1) {
		return nil, &ForwardError{Reason: near.UnknownReceipt(receiptID)}
	}
	return fmt.Appendf(nil, `{"predecessor_id":"alice.near","receiver_id":"bob.near","receipt_id":%q,"receipt":{"Action":{"signer_id":"alice.near","signer_public_key":"ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847","gas_price":"100000000","output_data_receivers":[],"input_data_ids":[],"actions":[{"Transfer":{"deposit":"1"}}],"is_promise_yield":false}},"priority":0}`, receiptID), nil
}

// ReceiptToTx knows the transaction of HashOf("receipt-1") only.
func (f *fakeBackend) ReceiptToTx(_ context.Context, receiptID string) (*near.ReceiptToTxView, error) {
	if receiptID != fakeHash("receipt", 1) {
		return nil, &ForwardError{Reason: near.UnknownReceipt(receiptID)}
	}
	return &near.ReceiptToTxView{TransactionHash: fakeHash("tx", 1), SenderAccountID: "alice.near"}, nil
}

func (f *fakeBackend) Validators(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, &ForwardError{Reason: NotServed("validators")}
}
