package rpcserve

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/nearline/nearline/near"
)

// methodFunc parses one method's params and asks the Backend. Its result is
// encoded as the response's `result`.
type methodFunc func(ctx context.Context, b Backend, params json.RawMessage) (any, error)

// methodTable is the explicit list of methods answered from the Backend.
func methodTable() map[string]methodFunc {
	return map[string]methodFunc{
		"block":                         parsed(blockReference, Backend.Block, raw),
		"chunk":                         parsed(chunkRequest, Backend.Chunk, raw),
		"EXPERIMENTAL_congestion_level": parsed(chunkRequest, Backend.CongestionLevel, found),
		"block_effects":                 blockEffectsMethod,
		"EXPERIMENTAL_changes_in_block": changesInBlockMethod,
		"changes":                       changesMethod,
		"EXPERIMENTAL_changes":          changesMethod,
		"query":                         queryMethod,
		"gas_price":                     parsed(near.ParseGasPriceRequest, Backend.GasPrice, found),
		"genesis_config":                genesisConfigMethod,
		"EXPERIMENTAL_genesis_config":   genesisConfigMethod,
		"EXPERIMENTAL_protocol_config":  parsed(near.ParseBlockReference, Backend.ProtocolConfig, raw),
		"status":                        statusMethod,
		"health":                        healthMethod,
		"tx":                            txMethod(false),
		"EXPERIMENTAL_tx_status":        txMethod(true),
		"validators":                    validatorsMethod,
		"EXPERIMENTAL_receipt":          parsed(near.ParseReceiptRequest, Backend.Receipt, raw),
		"EXPERIMENTAL_receipt_to_tx":    parsed(near.ParseReceiptRequest, Backend.ReceiptToTx, found),
		// nearcore 2.x's structured forms of query: the same results, and
		// errors (CONTRACT_EXECUTION_ERROR, UNKNOWN_ACCESS_KEY) as errors.
		"EXPERIMENTAL_view_account":         viewMethod(near.QueryViewAccount),
		"EXPERIMENTAL_view_code":            viewMethod(near.QueryViewCode),
		"EXPERIMENTAL_view_state":           viewMethod(near.QueryViewState),
		"EXPERIMENTAL_view_access_key":      viewMethod(near.QueryViewAccessKey),
		"EXPERIMENTAL_view_access_key_list": viewMethod(near.QueryViewAccessKeyList),
		"EXPERIMENTAL_call_function":        viewMethod(near.QueryCallFunction),
		"EXPERIMENTAL_view_gas_key":         viewMethod(near.QueryViewGasKey),
		"EXPERIMENTAL_view_gas_key_list":    viewMethod(near.QueryViewGasKeyList),
	}
}

// isUpstreamQuery reports whether requestType is a `query` request type the
// archive never answers itself (gas keys, which it does not keep apart
// yet): like an upstream method, it is forwarded or refused with
// QueryNotServed.
func isUpstreamQuery(requestType string) bool {
	switch requestType {
	case near.QueryViewGasKey, near.QueryViewGasKeyList:
		return true
	}
	return false
}

// isUpstreamMethod reports whether name is a NEAR method the archive never
// answers itself: it is forwarded upstream or refused with NotServed.
func isUpstreamMethod(name string) bool {
	switch name {
	case "send_tx", "broadcast_tx_async", "broadcast_tx_commit",
		"network_info", "client_config", "EXPERIMENTAL_client_config",
		"light_client_proof", "next_light_client_block", "light_client_block_proof",
		"EXPERIMENTAL_light_client_proof", "EXPERIMENTAL_light_client_block_proof",
		"EXPERIMENTAL_light_client_execution_proof",
		"EXPERIMENTAL_check_tx",
		"EXPERIMENTAL_validators_ordered",
		"maintenance_windows", "EXPERIMENTAL_maintenance_windows",
		"EXPERIMENTAL_split_storage_info":
		return true
	}
	return false
}

// upstreamMethod answers a node-only method (isUpstreamMethod): from a
// NodeBackend, else with a ForwardError, so that it is forwarded or
// refused with NotServed.
func upstreamMethod(name string) methodFunc {
	return func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
		if node, ok := b.(NodeBackend); ok {
			return raw(node.NodeMethod(ctx, name, params))
		}
		return nil, &ForwardError{Reason: NotServed(name)}
	}
}

var errNoResult = errors.New("backend returned no result")

// raw rejects an empty raw result, which would encode as an empty `result`.
func raw(v json.RawMessage, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if len(v) == 0 {
		return nil, errNoResult
	}
	return v, nil
}

// found is raw for a Backend method that returns a pointer: a nil one
// with no error is errNoResult.
func found[T any](v *T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errNoResult
	}
	return v, nil
}

// parsed is a method whose params parse reads (a PARSE_ERROR as it comes)
// and that asks the Backend with ask, whose answer result checks (raw or
// found).
func parsed[P, R any](parse func(json.RawMessage) (P, error), ask func(Backend, context.Context, P) (R, error), result func(R, error) (any, error)) methodFunc {
	return func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
		p, perr := parse(params)
		if perr != nil {
			return nil, perr
		}
		return result(ask(b, ctx, p))
	}
}

// blockReference reads `block`'s params, legacy positional forms included.
func blockReference(params json.RawMessage) (near.BlockReference, error) {
	return near.ParseBlockReference(blockParams(params))
}

// chunkRequest reads `chunk`'s params, legacy positional forms included;
// EXPERIMENTAL_congestion_level takes them too, as nearcore parses both
// with one chunk reference parser.
func chunkRequest(params json.RawMessage) (near.ChunkRequest, error) {
	return near.ParseChunkRequest(chunkParams(params))
}

// blockEffectsResult carries the effects under both names: `changes`
// (nearcore) and `block_effects` (the published interface).
type blockEffectsResult struct {
	BlockHash    string                     `json:"block_hash"`
	Changes      []near.StateChangeKindView `json:"changes"`
	BlockEffects []near.StateChangeKindView `json:"block_effects"`
}

func blockEffects(ctx context.Context, b Backend, params json.RawMessage) (*near.BlockEffectsView, error) {
	ref, perr := near.ParseBlockReference(params)
	if perr != nil {
		return nil, perr
	}
	view, err := b.BlockEffects(ctx, ref)
	return stateChanges(view, err, func(v *near.BlockEffectsView) *[]near.StateChangeKindView { return &v.Changes })
}

func blockEffectsMethod(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
	view, err := blockEffects(ctx, b, params)
	if err != nil {
		return nil, err
	}
	return blockEffectsResult{BlockHash: view.BlockHash, Changes: view.Changes, BlockEffects: view.Changes}, nil
}

func changesInBlockMethod(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
	return blockEffects(ctx, b, params)
}

func changesMethod(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
	req, perr := near.ParseChangesRequest(params)
	if perr != nil {
		return nil, perr
	}
	view, err := b.Changes(ctx, req)
	return stateChanges(view, err, func(v *near.ChangesView) *[]near.StateChangeWithCauseView { return &v.Changes })
}

// stateChanges is a changes method's answer from its Backend call: an
// error in nearcore's shape for the changes methods (stateChangesError),
// a nil view errNoResult, else a copy whose nil list of changes (which
// changes points to) is empty, as nearcore writes [] for none.
func stateChanges[V, C any](view *V, err error, changes func(*V) *[]C) (*V, error) {
	if err != nil {
		return nil, stateChangesError(err)
	}
	if view == nil {
		return nil, errNoResult
	}
	out := *view
	if list := changes(&out); *list == nil {
		*list = []C{}
	}
	return &out, nil
}

// stateChangesError gives the changes methods' UNKNOWN_BLOCK and
// NOT_SYNCED_YET nearcore's shape for them: the legacy `data` is the error
// object itself ({"name": ..., "info": ...}), not a string. Other errors
// (and a ForwardError, which may still be forwarded) pass unchanged.
func stateChangesError(err error) error {
	var fwd *ForwardError
	var ne *near.Error
	if errors.As(err, &fwd) || !errors.As(err, &ne) || ne.Name != near.KindHandler || ne.Cause == nil {
		return err
	}
	switch ne.Cause.Name {
	case "UNKNOWN_BLOCK", "NOT_SYNCED_YET":
	default:
		return err
	}
	shaped := *ne
	shaped.Data = mustJSON(struct {
		Name string          `json:"name"`
		Info json.RawMessage `json:"info"`
	}{ne.Cause.Name, ne.Cause.Info})
	return &shaped
}

func genesisConfigMethod(ctx context.Context, b Backend, _ json.RawMessage) (any, error) {
	return raw(b.GenesisConfig(ctx))
}

func statusMethod(ctx context.Context, b Backend, _ json.RawMessage) (any, error) {
	return raw(b.Status(ctx))
}

func healthMethod(ctx context.Context, b Backend, _ json.RawMessage) (any, error) {
	if err := b.Health(ctx); err != nil {
		return nil, err
	}
	return json.RawMessage("null"), nil
}

func txMethod(withReceipts bool) methodFunc {
	return func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
		req, perr := near.ParseTxRequest(params)
		if perr != nil {
			return nil, perr
		}
		return raw(b.Tx(ctx, req, withReceipts))
	}
}

func validatorsMethod(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
	if params == nil {
		params = json.RawMessage("null")
	}
	return raw(b.Validators(ctx, params))
}
