package archive

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nearline/nearline/internal/retry"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
)

// The methods of rpcserve.Backend. Each runs its read once more when it
// failed on a transient database error (a dropped connection, a server
// restart) and the request is still live; a second failure is returned.

func (a *Backend) Block(ctx context.Context, ref near.BlockReference) (json.RawMessage, error) {
	return withRetry(ctx, a, "block", func() (json.RawMessage, error) { return a.block(ctx, ref) })
}

func (a *Backend) Chunk(ctx context.Context, req near.ChunkRequest) (json.RawMessage, error) {
	return withRetry(ctx, a, "chunk", func() (json.RawMessage, error) { return a.chunk(ctx, req) })
}

func (a *Backend) CongestionLevel(ctx context.Context, req near.ChunkRequest) (*near.CongestionLevelView, error) {
	return withRetry(ctx, a, "congestion_level", func() (*near.CongestionLevelView, error) { return a.congestionLevel(ctx, req) })
}

func (a *Backend) BlockEffects(ctx context.Context, ref near.BlockReference) (*near.BlockEffectsView, error) {
	return withRetry(ctx, a, "block_effects", func() (*near.BlockEffectsView, error) { return a.blockEffects(ctx, ref) })
}

func (a *Backend) Changes(ctx context.Context, req near.ChangesRequest) (*near.ChangesView, error) {
	return withRetry(ctx, a, "changes", func() (*near.ChangesView, error) { return a.changes(ctx, req) })
}

func (a *Backend) Query(ctx context.Context, req near.QueryRequest) (any, error) {
	return withRetry(ctx, a, "query", func() (any, error) { return a.query(ctx, req) })
}

func (a *Backend) GasPrice(ctx context.Context, id *near.BlockID) (*near.GasPriceView, error) {
	return withRetry(ctx, a, "gas_price", func() (*near.GasPriceView, error) { return a.gasPrice(ctx, id) })
}

func (a *Backend) GenesisConfig(ctx context.Context) (json.RawMessage, error) {
	return withRetry(ctx, a, "genesis_config", func() (json.RawMessage, error) { return a.genesisConfig(ctx) })
}

func (a *Backend) ProtocolConfig(ctx context.Context, ref near.BlockReference) (json.RawMessage, error) {
	return withRetry(ctx, a, "protocol_config", func() (json.RawMessage, error) { return a.protocolConfig(ctx, ref) })
}

func (a *Backend) Status(ctx context.Context) (json.RawMessage, error) {
	return withRetry(ctx, a, "status", func() (json.RawMessage, error) { return a.status(ctx) })
}

func (a *Backend) Health(ctx context.Context) error {
	_, err := withRetry(ctx, a, "health", func() (struct{}, error) { return struct{}{}, a.health(ctx) })
	return err
}

func (a *Backend) Tx(ctx context.Context, req near.TxRequest, withReceipts bool) (json.RawMessage, error) {
	return withRetry(ctx, a, "tx", func() (json.RawMessage, error) { return a.tx(ctx, req, withReceipts) })
}

func (a *Backend) Receipt(ctx context.Context, receiptID string) (json.RawMessage, error) {
	return withRetry(ctx, a, "receipt", func() (json.RawMessage, error) { return a.receipt(ctx, receiptID) })
}

func (a *Backend) ReceiptToTx(ctx context.Context, receiptID string) (*near.ReceiptToTxView, error) {
	return withRetry(ctx, a, "receipt_to_tx", func() (*near.ReceiptToTxView, error) { return a.receiptToTx(ctx, receiptID) })
}

func (a *Backend) Validators(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	return withRetry(ctx, a, "validators", func() (json.RawMessage, error) { return a.validators(ctx, params) })
}

// withRetry runs read, and once more when it failed on a transient database
// error while ctx is still live.
func withRetry[T any](ctx context.Context, a *Backend, method string, read func() (T, error)) (T, error) {
	var v T
	policy := retry.Policy{Attempts: 2, Retryable: store.IsTransient, OnRetry: func(_ int, err error) {
		a.logger.Warn("archive read hit a transient database error; retrying once", "method", method, "err", err)
	}}
	err := policy.Do(ctx, func(context.Context) (err error) {
		v, err = read()
		return err
	})
	if ex, ok := errors.AsType[*retry.ExhaustedError](err); ok {
		err = ex.Err // the second failure, as it was
	}
	return v, err
}
