package rpcsource

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/bounds"
	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/internal/retry"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/upstream"
)

// Defaults of Config; `nearline index` flags use them too.
const (
	DefaultConcurrency  = 32
	DefaultMaxInFlight  = 64
	DefaultChangesBatch = 100
)

// Config tunes Source. The zero value is usable: zero means the
// default for every field.
type Config struct {
	// Concurrency bounds the calls made at once for one block (chunks,
	// changes, tx statuses). Default DefaultConcurrency (a mainnet block has
	// ~100 tx statuses).
	Concurrency int
	// MaxInFlight bounds the calls made at once to the upstream, over all
	// blocks fetched together, so that many workers do not overload it.
	// Default DefaultMaxInFlight; -1 for no bound (the one negative value
	// accepted).
	MaxInFlight int
	// ChangesBatch is the number of account ids per EXPERIMENTAL_changes
	// call. Default DefaultChangesBatch.
	ChangesBatch int
	// Waits is how a status or block the upstream does not have final yet
	// is waited for.
	upstream.Waits
}

func (c Config) withDefaults() Config {
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.MaxInFlight = cmp.Or(c.MaxInFlight, DefaultMaxInFlight)
	c.ChangesBatch = cmp.Or(c.ChangesBatch, DefaultChangesBatch)
	c.Waits = c.Waits.WithDefaults()
	return c
}

// validate reports every setting out of range; c has its defaults applied.
func (c Config) validate() error {
	var inFlight error
	if c.MaxInFlight < 1 && c.MaxInFlight != -1 {
		inFlight = fmt.Errorf("upstream concurrency %d: want at least 1, or -1 for no bound", c.MaxInFlight)
	}
	return errors.Join(
		bounds.AtLeast("block concurrency", c.Concurrency, 1),
		inFlight,
		bounds.AtLeast("changes batch", c.ChangesBatch, 1),
		c.Waits.Validate(),
	)
}

// Source is the Source that reads an upstream node over JSON-RPC.
type Source struct {
	rpc    upstream.RPC
	cfg    Config
	logger *slog.Logger
	epochs *upstream.Epochs

	chunkFloor atomic.Uint64 // chunks included below it were never fetched

	mu          sync.Mutex
	blockHeight map[string]uint64 // block hash -> height, for outcomes
}

// New returns a Source reading rpc, logging to logger (nil:
// discard). It fails when a setting of cfg is out of range.
func New(rpc upstream.RPC, cfg Config, logger *slog.Logger) (*Source, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("configure node source: %w", err)
	}
	rpc = upstream.Limit(rpc, cfg.MaxInFlight)
	return &Source{rpc: rpc, cfg: cfg, logger: logs.OrDiscard(logger), epochs: upstream.NewEpochs(rpc), blockHeight: map[string]uint64{}}, nil
}

// Prepare is called by the indexer at the start of each Run with the lowest
// height the archive holds: a block that repeats a chunk included below it
// (a missing chunk) also fetches that chunk, which no earlier bundle
// carried. It also forgets which epochs' protocol configs were fetched, as a
// failed run may not have committed them.
func (s *Source) Prepare(chunkFloor uint64) {
	s.chunkFloor.Store(chunkFloor)
	s.epochs.Reset()
}

// FinalHead returns the height of the upstream's latest final block.
func (s *Source) FinalHead(ctx context.Context) (uint64, error) {
	return upstream.FinalHead(ctx, s.rpc)
}

// GenesisConfig returns the upstream's genesis_config result.
func (s *Source) GenesisConfig(ctx context.Context) (json.RawMessage, error) {
	return upstream.GenesisConfig(ctx, s.rpc)
}

// Bundle fetches the block at height, its new chunks, block effects, the
// state changes the effects name, its transactions' statuses and, for a new
// epoch, the protocol config.
func (s *Source) Bundle(ctx context.Context, height uint64) (*bundle.Bundle, error) {
	raw, err := s.fetchBlock(ctx, height)
	if err != nil {
		return nil, err
	}
	b := &bundle.Bundle{BlockJSON: raw}
	if err := json.Unmarshal(raw, &b.Block); err != nil {
		return nil, fmt.Errorf("decode block %d: %w", height, err)
	}
	hash := b.Block.Header.Hash
	s.rememberHeight(hash, height)

	var newChunks, olderChunks []near.ChunkHeaderView
	floor := s.chunkFloor.Load()
	for _, c := range b.Block.Chunks {
		switch {
		case c.HeightIncluded == height:
			newChunks = append(newChunks, c)
		case c.HeightIncluded < floor:
			// A missing chunk repeating one from before the archive: no
			// earlier bundle carried it.
			olderChunks = append(olderChunks, c)
		}
	}
	b.Chunks = make([]bundle.Chunk, len(newChunks))
	b.OlderChunks = make([]bundle.Chunk, len(olderChunks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	fetchChunk := func(c near.ChunkHeaderView, into *bundle.Chunk) {
		g.Go(func() error {
			raw, err := s.rpc.CallRaw(gctx, "chunk", map[string]string{"chunk_id": c.ChunkHash})
			if err != nil {
				return fmt.Errorf("fetch chunk %s (shard %d): %w", c.ChunkHash, c.ShardID, err)
			}
			into.JSON = raw
			if err := json.Unmarshal(raw, &into.View); err != nil {
				return fmt.Errorf("decode chunk %s: %w", c.ChunkHash, err)
			}
			return nil
		})
	}
	for i, c := range newChunks {
		fetchChunk(c, &b.Chunks[i])
	}
	for i, c := range olderChunks {
		fetchChunk(c, &b.OlderChunks[i])
	}
	g.Go(func() error { return s.fetchChanges(gctx, b) })
	g.Go(func() error { return s.fetchProtocolConfig(gctx, b) })
	err = g.Wait()
	if err == nil {
		err = s.fetchTxStatuses(ctx, b)
	}
	if err != nil {
		s.forgetEpoch(b)
		return nil, fmt.Errorf("height %d: %w", height, err)
	}
	return b, nil
}

// forgetEpoch lets the next bundle of a failed bundle's epoch carry its
// protocol config again when the failed one had it: a bundle that is not
// returned is fetched again, and its epoch would otherwise never have its
// config stored.
func (s *Source) forgetEpoch(b *bundle.Bundle) {
	if b.ProtocolConfig != nil {
		s.epochs.Release(b.Block.Header.EpochID)
	}
}

// fetchBlock fetches the block at height. UNKNOWN_BLOCK means the chain
// skipped the height only when the upstream's final head was already at or
// above it when the block was asked for: an upstream that is behind (after
// a failover, or restarted and catching up) is asked again until it
// catches up, and a head seen above the height only after an UNKNOWN_BLOCK
// (the block may have come between the two calls) is followed by one more
// ask, so a lagging node never makes a height look skipped.
func (s *Source) fetchBlock(ctx context.Context, height uint64) (json.RawMessage, error) {
	var raw json.RawMessage
	var head uint64
	ask := func(ctx context.Context) error {
		headPassed := false // a final head at or above height was seen before this ask
		for {
			var err error
			raw, err = s.rpc.CallRaw(ctx, "block", map[string]uint64{"block_id": height})
			switch {
			case err == nil:
				return nil
			case !near.IsUnknownBlock(err):
				return fmt.Errorf("fetch block %d: %w", height, err)
			case headPassed:
				return fmt.Errorf("block %d: %w", height, bundle.ErrNoBlock)
			}
			if head, err = s.FinalHead(ctx); err != nil {
				return fmt.Errorf("confirm block %d is skipped: %w", height, err)
			}
			if head < height {
				return fmt.Errorf("block %d: %w: final head %d is still below it", height, upstream.ErrBehind, head)
			}
			headPassed = true // ask once more: a final head is past the height for good
		}
	}
	err := s.cfg.Behind(ctx, ask, func(error) {
		s.logger.Warn("upstream is behind; asking again", "height", height, "head", head)
	})
	if err != nil {
		return nil, err
	}
	return raw, nil
}

// changeKinds maps a block effect type to the EXPERIMENTAL_changes request
// that lists its changes, in the order changes are stored.
var changeKinds = []struct{ effect, changesType string }{
	{near.EffectAccountTouched, "account_changes"},
	{near.EffectAccessKeyTouched, "all_access_key_changes"},
	{near.EffectDataTouched, "data_changes"},
	{near.EffectContractCodeTouched, "contract_code_changes"},
}

func (s *Source) fetchChanges(ctx context.Context, b *bundle.Bundle) error {
	hash := b.Block.Header.Hash
	raw, err := s.rpc.CallRaw(ctx, "EXPERIMENTAL_changes_in_block", map[string]string{"block_id": hash})
	if err != nil {
		return fmt.Errorf("fetch block effects: %w", err)
	}
	var effects near.BlockEffectsView
	if err := json.Unmarshal(raw, &effects); err != nil {
		return fmt.Errorf("decode block effects: %w", err)
	}
	b.Effects = effects.Changes
	if b.Effects == nil {
		b.Effects = []near.StateChangeKindView{}
	}
	// The four kinds are fetched at once and kept in changeKinds order.
	perKind := make([][]bundle.StateChange, len(changeKinds))
	g, gctx := errgroup.WithContext(ctx)
	for i, kind := range changeKinds {
		var accounts []string
		seen := map[string]bool{}
		for _, e := range b.Effects {
			if e.Type == kind.effect && !seen[e.AccountID] {
				seen[e.AccountID] = true
				accounts = append(accounts, e.AccountID)
			}
		}
		if len(accounts) == 0 {
			continue
		}
		g.Go(func() error {
			changes, err := s.fetchChangesOfKind(gctx, hash, kind.changesType, accounts)
			perKind[i] = changes
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, changes := range perKind {
		b.Changes = append(b.Changes, changes...)
	}
	return nil
}

// fetchChangesOfKind calls EXPERIMENTAL_changes for accounts, ChangesBatch
// account ids per call, keeping the upstream's order.
func (s *Source) fetchChangesOfKind(ctx context.Context, blockHash, changesType string, accounts []string) ([]bundle.StateChange, error) {
	var out []bundle.StateChange
	for len(accounts) > 0 {
		part := accounts[:min(len(accounts), s.cfg.ChangesBatch)]
		accounts = accounts[len(part):]
		params := map[string]any{"block_id": blockHash, "changes_type": changesType, "account_ids": part}
		if changesType == "data_changes" {
			params["key_prefix_base64"] = ""
		}
		raw, err := s.rpc.CallRaw(ctx, "EXPERIMENTAL_changes", params)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", changesType, err)
		}
		var res struct {
			Changes []json.RawMessage `json:"changes"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("decode %s: %w", changesType, err)
		}
		for _, c := range res.Changes {
			sc := bundle.StateChange{JSON: c}
			if err := json.Unmarshal(c, &sc.View); err != nil {
				return nil, fmt.Errorf("decode %s entry: %w", changesType, err)
			}
			out = append(out, sc)
		}
	}
	return out, nil
}

// fetchProtocolConfig attaches the epoch's protocol config to the bundle
// that claims the epoch first, and to every bundle the shard ids of the
// epoch's layout where its chunk headers name others (bundle.Bundle's
// ShardIDs).
func (s *Source) fetchProtocolConfig(ctx context.Context, b *bundle.Bundle) error {
	epoch, hash := b.Block.Header.EpochID, b.Block.Header.Hash
	if !s.epochs.Claim(epoch) {
		ids, err := s.epochs.Layout(ctx, epoch, hash)
		b.ShardIDs = bundle.LayoutShardIDs(b.Block.Chunks, ids)
		return err
	}
	cfg, err := s.epochs.Config(ctx, epoch, hash)
	if err != nil {
		s.epochs.Release(epoch)
		return err
	}
	b.ShardIDs = bundle.LayoutShardIDs(b.Block.Chunks, upstream.ConfigShardIDs(cfg.JSON))
	b.ProtocolConfig = cfg
	return nil
}

func (s *Source) rememberHeight(hash string, height uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.blockHeight) > 100_000 {
		clear(s.blockHeight)
	}
	s.blockHeight[hash] = height
}

// heightOf returns the height of the block with hash, asking the upstream
// when it is not known yet.
func (s *Source) heightOf(ctx context.Context, hash string) (uint64, error) {
	s.mu.Lock()
	h, ok := s.blockHeight[hash]
	s.mu.Unlock()
	if ok {
		return h, nil
	}
	raw, err := s.rpc.CallRaw(ctx, "block", map[string]string{"block_id": hash})
	if err != nil {
		return 0, fmt.Errorf("fetch block %s: %w", hash, err)
	}
	var b struct {
		Header struct {
			Height uint64 `json:"height"`
		} `json:"header"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return 0, fmt.Errorf("decode block %s: %w", hash, err)
	}
	s.rememberHeight(hash, b.Header.Height)
	return b.Header.Height, nil
}

func (s *Source) fetchTxStatuses(ctx context.Context, b *bundle.Bundle) error {
	var txs []near.SignedTransactionView
	for _, c := range b.Chunks {
		txs = append(txs, c.View.Transactions...)
	}
	b.TxStatuses = make([]bundle.TxStatus, len(txs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	for i, tx := range txs {
		g.Go(func() error {
			st, err := s.txStatus(gctx, b.Height(), tx)
			if err != nil {
				return err
			}
			b.TxStatuses[i] = st
			return nil
		})
	}
	return g.Wait()
}

// fetchTxStatus fetches a transaction's EXPERIMENTAL_tx_status once and
// decodes what the source and the store read of it.
func (s *Source) fetchTxStatus(ctx context.Context, txHash, signerID string) (json.RawMessage, *bundle.TxStatusBody, error) {
	body := new(bundle.TxStatusBody)
	raw, err := s.rpc.CallRaw(ctx, "EXPERIMENTAL_tx_status", map[string]string{"tx_hash": txHash, "sender_account_id": signerID})
	if err != nil {
		return nil, body, fmt.Errorf("fetch status of tx %s: %w", txHash, err)
	}
	if err := json.Unmarshal(raw, body); err != nil {
		return nil, body, fmt.Errorf("decode status of tx %s: %w", txHash, err)
	}
	return raw, body, nil
}

// withHeights builds the stored status, resolving its outcomes' block
// heights.
func (s *Source) withHeights(ctx context.Context, txHash, signerID string, raw json.RawMessage, body *bundle.TxStatusBody) (bundle.TxStatus, error) {
	st := bundle.TxStatus{TxHash: txHash, SignerID: signerID, JSON: raw, BlockHeights: map[string]uint64{}, Body: body}
	var hashes []string
	for _, o := range append([]*bundle.OutcomeFields{body.TransactionOutcome}, body.ReceiptsOutcome...) {
		if o != nil {
			hashes = append(hashes, o.BlockHash)
		}
	}
	for _, h := range hashes {
		if _, ok := st.BlockHeights[h]; ok || h == "" {
			continue
		}
		at, err := s.heightOf(ctx, h)
		if err != nil {
			return bundle.TxStatus{}, fmt.Errorf("status of tx %s: %w", txHash, err)
		}
		st.BlockHeights[h] = at
	}
	return st, nil
}

// TxStatus fetches a stored transaction's status again, once (the indexer
// revisits statuses that were not FINAL).
func (s *Source) TxStatus(ctx context.Context, ref bundle.TxRef) (bundle.TxStatus, bool, error) {
	raw, body, err := s.fetchTxStatus(ctx, ref.TxHash, ref.SignerID)
	if err != nil {
		return bundle.TxStatus{}, false, err
	}
	st, err := s.withHeights(ctx, ref.TxHash, ref.SignerID, raw, body)
	return st, body.FinalExecutionStatus == "FINAL", err
}

// txStatus fetches a transaction's EXPERIMENTAL_tx_status, re-fetching
// while it is not FINAL and the upstream's head advances (docs/internals.md).
func (s *Source) txStatus(ctx context.Context, height uint64, tx near.SignedTransactionView) (bundle.TxStatus, error) {
	began := time.Now()
	var lastHead uint64
	headMoved := began
	for {
		raw, body, err := s.fetchTxStatus(ctx, tx.Hash, tx.SignerID)
		if err != nil {
			return bundle.TxStatus{}, err
		}
		settled := body.FinalExecutionStatus == "FINAL" || time.Since(began) >= s.cfg.TxFinalWait
		if !settled {
			head, err := s.FinalHead(ctx)
			if err != nil {
				return bundle.TxStatus{}, err
			}
			if head != lastHead {
				lastHead, headMoved = head, time.Now()
			}
			settled = time.Since(headMoved) >= s.cfg.TxStallWait
		}
		if settled {
			if body.FinalExecutionStatus != "FINAL" {
				s.logger.Debug("storing a tx status that is not final; it is revisited later", "tx_hash", tx.Hash,
					"height", height, "final_execution_status", body.FinalExecutionStatus)
			}
			return s.withHeights(ctx, tx.Hash, tx.SignerID, raw, body)
		}
		if err := retry.Sleep(ctx, s.cfg.TxPollInterval); err != nil {
			return bundle.TxStatus{}, err
		}
	}
}
