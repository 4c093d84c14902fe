package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
)

// block returns the stored `block` result.
func (a *Backend) block(ctx context.Context, ref near.BlockReference) (json.RawMessage, error) {
	stamp, err := a.resolve(ctx, ref, blockFlavor)
	if err != nil {
		return nil, err
	}
	view, err := a.store.BlockView(ctx, near.HeightID(stamp.BlockHeight))
	if err != nil {
		return nil, fmt.Errorf("read block %d: %w", stamp.BlockHeight, err)
	}
	return view, nil
}

// chunk returns the stored `chunk` result, by hash or by block and shard.
func (a *Backend) chunk(ctx context.Context, req near.ChunkRequest) (json.RawMessage, error) {
	hash, err := a.chunkHash(ctx, req)
	if err != nil {
		return nil, err
	}
	view, err := a.store.ChunkView(ctx, hash)
	if err != nil {
		// A chunk the archive lacks may be older than its first block.
		return nil, readFailed(err, near.UnknownChunk(hash), "read chunk "+hash)
	}
	return view, nil
}

// chunkHash resolves a chunk request to a chunk hash: the one given, or
// the one the block carries for the shard (for a missing chunk, the older
// chunk it repeats).
func (a *Backend) chunkHash(ctx context.Context, req near.ChunkRequest) (string, error) {
	if req.BlockID == nil {
		if _, _, err := a.store.LatestBlock(ctx); isNotFound(err) {
			return "", near.NotSyncedYet()
		}
		return req.ChunkID, nil
	}
	stamp, err := a.resolve(ctx, near.BlockReference{BlockID: req.BlockID}, blockFlavor)
	if err != nil {
		return "", err
	}
	hash, err := a.store.ChunkHashAt(ctx, stamp.BlockHeight, req.ShardID)
	if isNotFound(err) {
		return "", near.InvalidShardID(req.ShardID)
	}
	if err != nil {
		return "", fmt.Errorf("read chunk hash of shard %d at %d: %w", req.ShardID, stamp.BlockHeight, err)
	}
	return hash, nil
}

// blockEffects returns the block's `EXPERIMENTAL_changes_in_block` result.
func (a *Backend) blockEffects(ctx context.Context, ref near.BlockReference) (*near.BlockEffectsView, error) {
	stamp, err := a.resolve(ctx, ref, blockFlavor)
	if err != nil {
		return nil, err
	}
	effects, err := a.store.BlockEffects(ctx, stamp.BlockHeight)
	if err != nil {
		return nil, fmt.Errorf("read block effects at %d: %w", stamp.BlockHeight, err)
	}
	return &near.BlockEffectsView{BlockHash: stamp.BlockHash, Changes: effects}, nil
}

// changeTypes maps a changes_type to the state change types it returns.
func changeTypes(changesType string) []string {
	switch changesType {
	case near.ChangesAccount:
		return []string{near.ChangeAccountUpdate, near.ChangeAccountDeletion}
	case near.ChangesAllAccessKey, near.ChangesSingleAccessKey:
		return []string{near.ChangeAccessKeyUpdate, near.ChangeAccessKeyDeletion}
	case near.ChangesData:
		return []string{near.ChangeDataUpdate, near.ChangeDataDeletion}
	case near.ChangesContractCode:
		return []string{near.ChangeContractCodeUpdate, near.ChangeContractCodeDeletion}
	}
	return nil
}

// changes returns the `EXPERIMENTAL_changes` result: the block's stored
// state changes of the asked kind and accounts, in upstream order.
func (a *Backend) changes(ctx context.Context, req near.ChangesRequest) (*near.ChangesView, error) {
	stamp, err := a.resolve(ctx, req.Block, blockFlavor)
	if err != nil {
		return nil, err
	}
	types := changeTypes(req.ChangesType)
	if types == nil {
		return nil, near.ParseError(fmt.Sprintf("Failed parsing args: unknown changes_type %q", req.ChangesType))
	}
	accounts := req.AccountIDs
	if req.ChangesType == near.ChangesSingleAccessKey {
		accounts = keyAccounts(req.Keys)
	}
	raws, err := a.store.StateChangesJSON(ctx, stamp.BlockHeight, types, accounts)
	if err != nil {
		return nil, fmt.Errorf("read %s at %d: %w", req.ChangesType, stamp.BlockHeight, err)
	}
	// Each change is served as stored; only the two kinds filtered here
	// read the members they filter on.
	changes := make([]near.StateChangeWithCauseView, len(raws))
	filtered := req.ChangesType == near.ChangesSingleAccessKey || req.ChangesType == near.ChangesData
	for i, raw := range raws {
		changes[i].Raw = raw
		if filtered {
			if err := json.Unmarshal(raw, &changes[i]); err != nil {
				return nil, fmt.Errorf("decode %s at %d: %w", req.ChangesType, stamp.BlockHeight, err)
			}
			changes[i].Raw = raw
		}
	}
	switch req.ChangesType {
	case near.ChangesSingleAccessKey:
		changes = filterKeys(changes, req.Keys)
	case near.ChangesData:
		changes = filterPrefix(changes, req.KeyPrefix)
	}
	return &near.ChangesView{BlockHash: stamp.BlockHash, Changes: changes}, nil
}

// keyAccounts lists the accounts of keys once each, in first-seen order.
func keyAccounts(keys []near.AccountPublicKey) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		if !seen[k.AccountID] {
			seen[k.AccountID] = true
			out = append(out, k.AccountID)
		}
	}
	return out
}

// filterKeys keeps the changes of the named keys, key by key in the order
// asked, each key's changes in upstream order.
func filterKeys(changes []near.StateChangeWithCauseView, keys []near.AccountPublicKey) []near.StateChangeWithCauseView {
	out := []near.StateChangeWithCauseView{}
	for _, k := range keys {
		for _, c := range changes {
			if c.Change.AccountID == k.AccountID && c.Change.PublicKey != nil && *c.Change.PublicKey == k.PublicKey {
				out = append(out, c)
			}
		}
	}
	return out
}

// filterPrefix keeps the data changes whose key starts with prefix.
func filterPrefix(changes []near.StateChangeWithCauseView, prefix []byte) []near.StateChangeWithCauseView {
	out := []near.StateChangeWithCauseView{}
	for _, c := range changes {
		if c.Change.KeyBase64 != nil && bytes.HasPrefix(*c.Change.KeyBase64, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// gasPrice returns the gas price in the header of the block id names, or of
// the latest block for nil.
func (a *Backend) gasPrice(ctx context.Context, id *near.BlockID) (*near.GasPriceView, error) {
	ref := near.BlockReference{BlockID: id}
	if id == nil {
		ref.Finality = near.FinalityFinal
	}
	stamp, err := a.resolve(ctx, ref, blockFlavor)
	if err != nil {
		return nil, err
	}
	header, err := a.header(ctx, stamp.BlockHeight)
	if err != nil {
		return nil, err
	}
	return &near.GasPriceView{GasPrice: header.GasPrice}, nil
}

// blockHeader is the part of a stored block header the archive reads.
type blockHeader struct {
	Height                uint64    `json:"height"`
	Hash                  string    `json:"hash"`
	EpochID               string    `json:"epoch_id"`
	PrevStateRoot         string    `json:"prev_state_root"`
	Timestamp             uint64    `json:"timestamp"`
	TimestampNanosec      string    `json:"timestamp_nanosec"`
	GasPrice              near.U128 `json:"gas_price"`
	LatestProtocolVersion uint32    `json:"latest_protocol_version"`
}

func (a *Backend) header(ctx context.Context, height uint64) (blockHeader, error) {
	view, err := a.store.BlockView(ctx, near.HeightID(height))
	if err != nil {
		return blockHeader{}, fmt.Errorf("read block %d: %w", height, err)
	}
	var block struct {
		Header blockHeader `json:"header"`
	}
	if err := json.Unmarshal(view, &block); err != nil {
		return blockHeader{}, fmt.Errorf("decode block %d header: %w", height, err)
	}
	return block.Header, nil
}

// protocolConfig returns the stored protocol config of the block's epoch.
func (a *Backend) protocolConfig(ctx context.Context, ref near.BlockReference) (json.RawMessage, error) {
	stamp, err := a.resolve(ctx, ref, blockFlavor)
	if err != nil {
		return nil, err
	}
	cfg, err := a.store.ProtocolConfigAt(ctx, stamp.BlockHeight)
	if err != nil {
		return nil, readFailed(err, noProtocolConfig(stamp.BlockHeight), fmt.Sprintf("read protocol config at %d", stamp.BlockHeight))
	}
	return cfg, nil
}
