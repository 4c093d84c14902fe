package docsource

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

// Defaults of Config. DefaultTxLookahead covers a yielded receipt,
// which runs up to yield_timeout_length_in_blocks (200 on mainnet) after
// the receipt that made it, and the resume's travel.
const (
	DefaultTxLookahead      = 250
	DefaultRevisitLookahead = 1000
	DefaultConcurrency      = 16
	DefaultReadAhead        = 8
)

// Config tunes Source. Zero means the default for every field.
type Config struct {
	// TxLookahead bounds how many blocks after a transaction's block are
	// read for its receipts' outcomes before its status is stored as not
	// FINAL (and revisited). Default DefaultTxLookahead.
	TxLookahead int
	// RevisitLookahead is TxLookahead for a revisited status. Default
	// DefaultRevisitLookahead.
	RevisitLookahead int
	// ReadAhead is how many documents past a transaction's block are
	// fetched at once when its receipts' outcomes are looked for in blocks
	// not fetched yet. Default DefaultReadAhead.
	ReadAhead int
	// Waits: while a transaction's receipts may still execute in blocks
	// past the final head, its status waits for the head as rpcsource.Source's
	// does, and a height the upstream has no document for yet is asked again
	// up to BehindRetries times. Defaults rpcsource's.
	upstream.Waits
	// Concurrency bounds the statuses assembled at once for one block.
	// Default DefaultConcurrency.
	Concurrency int
	// Genesis is the genesis_config answer when there is no RPC upstream
	// (from a genesis file, GenesisConfigFromFile).
	Genesis json.RawMessage
}

func (c Config) withDefaults() Config {
	c.TxLookahead = cmp.Or(c.TxLookahead, DefaultTxLookahead)
	c.RevisitLookahead = cmp.Or(c.RevisitLookahead, DefaultRevisitLookahead)
	c.ReadAhead = cmp.Or(c.ReadAhead, DefaultReadAhead)
	c.Waits = c.Waits.WithDefaults()
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	return c
}

func (c Config) validate() error {
	return errors.Join(
		bounds.AtLeast("tx lookahead", c.TxLookahead, 1),
		bounds.AtLeast("revisit lookahead", c.RevisitLookahead, 1),
		bounds.AtLeast("read ahead", c.ReadAhead, 1),
		c.Waits.Validate(),
		bounds.AtLeast("concurrency", c.Concurrency, 1),
	)
}

// Source is the Source that reads one block document per height
// (neardata, NEAR Lake) and builds the Bundle rpcsource.Source would fetch for
// the same chain: block and chunk views, block effects and changes from the
// state changes, and each transaction's EXPERIMENTAL_tx_status assembled
// from its outcome and its receipts' outcomes in the documents of the
// blocks they executed in. Configs come from an RPC upstream (genesis once,
// protocol config once per epoch) or, without one, the genesis from
// Config.Genesis and no protocol configs.
//
// Documents are cached from their first fetch until the Bundles of their
// height and of every height below it have returned, so a document read
// ahead for a transaction's receipts is not fetched again for its own
// bundle.
type Source struct {
	logger *slog.Logger
	docs   Fetcher
	rpc    upstream.RPC     // nil: no configs from an upstream
	epochs *upstream.Epochs // nil without rpc
	cfg    Config

	chunkFloor atomic.Uint64

	refreshMu  sync.Mutex // one head refresh at a time
	headMu     sync.Mutex
	head       uint64
	headAt     time.Time // when head was fetched
	headMoved  time.Time // when head last grew
	headLoaded bool

	mu      sync.Mutex
	entries map[uint64]*docEntry
	// Documents below the watermark are dropped: every Bundle below it
	// returned, and the indexer asks heights in increasing order.
	watermark    uint64
	watermarkSet bool
	returned     map[uint64]bool // heights at or above the watermark whose Bundle returned
	// pending are the statuses stored before they were FINAL, with what
	// was found of them: a revisit reads only the documents after the
	// last it read.
	pending map[bundle.TxRef]*txProgress
}

// docEntry is a document being fetched or fetched: doc is nil for a
// skipped height.
type docEntry struct {
	ready chan struct{}
	doc   *parsedDoc
	err   error
}

// New returns a Source reading docs. rpc may be nil when
// cfg.Genesis is set. logger receives its warnings (nil: none).
func New(docs Fetcher, rpc upstream.RPC, cfg Config, logger *slog.Logger) (*Source, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("configure document source: %w", err)
	}
	if rpc == nil && len(cfg.Genesis) == 0 {
		return nil, errors.New("configure document source: need an RPC upstream or a genesis file for the genesis config")
	}
	s := &Source{logger: logs.OrDiscard(logger), docs: docs, rpc: rpc, cfg: cfg, entries: map[uint64]*docEntry{},
		returned: map[uint64]bool{}, pending: map[bundle.TxRef]*txProgress{}}
	if rpc != nil {
		s.epochs = upstream.NewEpochs(rpc)
	}
	return s, nil
}

// Prepare records the archive's floor (see Source) and forgets the epochs
// whose protocol config was fetched.
func (s *Source) Prepare(chunkFloor uint64) {
	s.chunkFloor.Store(chunkFloor)
	if s.epochs != nil {
		s.epochs.Reset()
	}
	s.mu.Lock()
	s.watermarkSet = false
	clear(s.returned)
	s.mu.Unlock()
}

// FinalHead returns the upstream's final head.
func (s *Source) FinalHead(ctx context.Context) (uint64, error) {
	h, err := s.docs.FinalHead(ctx)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	s.headMu.Lock()
	if h > s.head || !s.headLoaded {
		s.head, s.headMoved = h, now
	}
	s.headAt, s.headLoaded = now, true
	s.headMu.Unlock()
	return h, nil
}

// headState returns the last final head seen, when it was fetched and
// when it last grew.
func (s *Source) headState() (head uint64, at, moved time.Time, ok bool) {
	s.headMu.Lock()
	defer s.headMu.Unlock()
	return s.head, s.headAt, s.headMoved, s.headLoaded
}

// knownHead returns the last final head seen, fetching it when none was
// or when fresh is set and the last is older than TxPollInterval.
func (s *Source) knownHead(ctx context.Context, fresh bool) (uint64, error) {
	current := func() (uint64, bool) {
		h, at, _, ok := s.headState()
		return h, ok && (!fresh || time.Since(at) < s.cfg.TxPollInterval)
	}
	if h, ok := current(); ok {
		return h, nil
	}
	s.refreshMu.Lock() // many waiting statuses share one fetch
	defer s.refreshMu.Unlock()
	if h, ok := current(); ok {
		return h, nil
	}
	return s.FinalHead(ctx)
}

// GenesisConfig returns the RPC upstream's genesis_config, or Config's.
func (s *Source) GenesisConfig(ctx context.Context) (json.RawMessage, error) {
	if s.rpc == nil {
		return s.cfg.Genesis, nil
	}
	return upstream.GenesisConfig(ctx, s.rpc)
}

// load returns the document at height (nil for a skipped height), from
// the cache or fetched once however many callers ask. A height the
// upstream has no document for is skipped when a later block links over
// it; otherwise load returns ErrNoDocument.
func (s *Source) load(ctx context.Context, height uint64) (*parsedDoc, error) {
	return s.loadProbing(ctx, height, true)
}

// loadProbing is load; without probe, a missing document is ErrNoDocument
// without looking for a block linking over it (linkedOver's own loads, so
// a lake behind the head costs one request per height, not a cascade).
func (s *Source) loadProbing(ctx context.Context, height uint64, probe bool) (*parsedDoc, error) {
	for {
		s.mu.Lock()
		e := s.entries[height]
		owner := e == nil
		if owner {
			e = &docEntry{ready: make(chan struct{})}
			s.entries[height] = e
		}
		s.mu.Unlock()
		if owner {
			e.doc, e.err = s.fetch(ctx, height, probe)
			if e.err != nil {
				s.mu.Lock()
				if s.entries[height] == e {
					delete(s.entries, height)
				}
				s.mu.Unlock()
			}
			close(e.ready)
			return e.doc, e.err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-e.ready:
		}
		if e.err == nil && e.doc != nil && e.doc.buf.isReleased() {
			// Its block is written and its buffer reused: fetch it again.
			s.mu.Lock()
			if s.entries[height] == e {
				delete(s.entries, height)
			}
			s.mu.Unlock()
			continue
		}
		if e.err == nil || !(errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
			return e.doc, e.err
		}
		// The fetching caller went away; fetch for this one.
	}
}

// fetch fetches and parses one document.
func (s *Source) fetch(ctx context.Context, height uint64, probe bool) (*parsedDoc, error) {
	d, err := s.docs.Document(ctx, height)
	switch {
	case errors.Is(err, bundle.ErrNoBlock):
		return nil, nil
	case errors.Is(err, ErrNoDocument) && !probe:
		return nil, err
	case errors.Is(err, ErrNoDocument):
		if skipped, serr := s.linkedOver(ctx, height); serr != nil || !skipped {
			return nil, cmp.Or(serr, err)
		}
		return nil, nil
	case err != nil:
		return nil, err
	}
	p, err := parseDocument(d)
	if err != nil {
		return nil, fmt.Errorf("block document %d: %w", height, err)
	}
	if d.body != nil {
		p.buf = &docBuffer{body: d.body}
	}
	if p.height != height {
		return nil, fmt.Errorf("block document %d holds block %d", height, p.height)
	}
	return p, nil
}

// linkedOver reports whether the chain skipped height: the next block
// with a document, at or below the final head, names an earlier previous
// height.
func (s *Source) linkedOver(ctx context.Context, height uint64) (bool, error) {
	head, err := s.knownHead(ctx, false)
	if err != nil {
		return false, err
	}
	for h := height + 1; h <= head && h <= height+uint64(s.cfg.TxLookahead); h++ {
		d, err := s.loadProbing(ctx, h, false)
		if errors.Is(err, ErrNoDocument) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if d == nil {
			continue
		}
		return d.block.Header.PrevHeight != nil && *d.block.Header.PrevHeight < height, nil
	}
	return false, nil
}

// begin and end bracket a Bundle; end drops the documents below the
// watermark, the lowest height whose Bundle has not returned (a document
// read ahead stays until its own Bundle has used it, whichever order the
// workers run in).
func (s *Source) begin(height uint64) {
	s.mu.Lock()
	if !s.watermarkSet || height < s.watermark {
		s.watermark, s.watermarkSet = height, true
	}
	s.mu.Unlock()
}

func (s *Source) end(height uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if height < s.watermark {
		return
	}
	s.returned[height] = true
	for s.returned[s.watermark] {
		delete(s.returned, s.watermark)
		s.watermark++
	}
	for h, e := range s.entries {
		select {
		case <-e.ready:
			if h < s.watermark {
				delete(s.entries, h)
			}
		default:
		}
	}
}

// Bundle builds the Bundle at height from its document (and, for its
// transactions, the documents of the blocks their receipts executed in).
func (s *Source) Bundle(ctx context.Context, height uint64) (*bundle.Bundle, error) {
	s.begin(height)
	defer s.end(height)
	d, err := s.loadWaiting(ctx, height)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, fmt.Errorf("block %d: %w", height, bundle.ErrNoBlock)
	}
	b := &bundle.Bundle{Block: d.block, BlockJSON: d.raw, Effects: d.effects, Changes: d.changes,
		Chunks: []bundle.Chunk{}, OlderChunks: []bundle.Chunk{}, ShardIDs: bundle.LayoutShardIDs(d.block.Chunks, d.shardIDs)}
	if r, ok := s.docs.(recycler); ok && d.buf != nil {
		// Once the block is written nothing reads its document: the
		// blocks whose statuses hold parts of it are below it, written
		// by then, and loads no longer find it (loadProbing).
		buf := d.buf
		b.Release = func() { buf.release(r) }
	}
	floor := s.chunkFloor.Load()
	var txs []docTx
	for _, c := range d.block.Chunks {
		switch {
		case c.HeightIncluded == height:
			ch, ok := d.chunks[c.ShardID]
			if !ok {
				return nil, fmt.Errorf("block %d: document has no chunk for shard %d", height, c.ShardID)
			}
			b.Chunks = append(b.Chunks, ch)
			txs = append(txs, d.txs[c.ShardID]...)
		case c.HeightIncluded < floor:
			older, err := s.olderChunk(ctx, c)
			if err != nil {
				return nil, fmt.Errorf("block %d: %w", height, err)
			}
			b.OlderChunks = append(b.OlderChunks, older)
		}
	}
	b.TxStatuses = make([]bundle.TxStatus, len(txs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	for i, tx := range txs {
		g.Go(func() error {
			st, _, err := s.txStatus(gctx, newTxProgress(d, tx), s.cfg.TxLookahead, true)
			b.TxStatuses[i] = st
			return err
		})
	}
	g.Go(func() error { return s.protocolConfig(gctx, b) })
	if err := g.Wait(); err != nil {
		if b.ProtocolConfig != nil {
			// The bundle is fetched again; the config must come with it.
			s.epochs.Release(b.Block.Header.EpochID)
		}
		return nil, fmt.Errorf("height %d: %w", height, err)
	}
	return b, nil
}

// loadWaiting is load, asking again while the upstream has no document
// for height yet (a lake behind the head, a head that moved back after a
// failover), as rpcsource.Source does for a lagging node.
func (s *Source) loadWaiting(ctx context.Context, height uint64) (*parsedDoc, error) {
	var d *parsedDoc
	asked := false
	ask := func(ctx context.Context) error {
		if asked {
			if _, err := s.knownHead(ctx, true); err != nil {
				return err
			}
		}
		asked = true
		var err error
		d, err = s.load(ctx, height)
		if errors.Is(err, ErrNoDocument) {
			return fmt.Errorf("block %d: %w: %w", height, upstream.ErrBehind, err)
		}
		return err
	}
	err := s.cfg.Behind(ctx, ask, func(error) {
		s.logger.Warn("upstream has no document yet; asking again", "height", height)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// olderChunk reads a repeated chunk from the document of the block that
// included it, which it pins: that block may be written before this one.
func (s *Source) olderChunk(ctx context.Context, c near.ChunkHeaderView) (bundle.Chunk, error) {
	d, err := s.load(ctx, c.HeightIncluded)
	for err == nil && d != nil && !d.buf.pin() {
		d, err = s.load(ctx, c.HeightIncluded) // given back meanwhile: load fetches it again
	}
	if err != nil {
		return bundle.Chunk{}, fmt.Errorf("fetch chunk %s (shard %d): %w", c.ChunkHash, c.ShardID, err)
	}
	if d != nil {
		if ch, ok := d.chunks[c.ShardID]; ok && ch.View.Header.ChunkHash == c.ChunkHash {
			return ch, nil
		}
	}
	return bundle.Chunk{}, fmt.Errorf("chunk %s (shard %d): not in the document of block %d", c.ChunkHash, c.ShardID, c.HeightIncluded)
}

func (s *Source) protocolConfig(ctx context.Context, b *bundle.Bundle) error {
	if s.epochs == nil {
		return nil
	}
	// The first bundle of an epoch to get here fetches its config; the
	// epoch is claimed first, so blocks of one epoch fetched together ask
	// once.
	epoch := b.Block.Header.EpochID
	if !s.epochs.Claim(epoch) {
		return nil
	}
	cfg, err := s.epochs.Config(ctx, epoch, b.Block.Header.Hash)
	if err != nil {
		s.epochs.Release(epoch)
		return err
	}
	b.ProtocolConfig = cfg
	return nil
}

// maxPending bounds the statuses whose progress is kept; past it the
// oldest knowledge is dropped (a revisit then reads from the start again).
const maxPending = 100_000

// TxStatus assembles a stored transaction's status again (the indexer
// revisits statuses that were not FINAL), reading only the documents past
// those read for it last time (all of them from its block after a
// restart), up to RevisitLookahead blocks after its own. A transaction its
// block's document does not hold answers UNKNOWN_TRANSACTION, which leaves
// the stored status as it is.
func (s *Source) TxStatus(ctx context.Context, ref bundle.TxRef) (bundle.TxStatus, bool, error) {
	key := bundle.TxRef{TxHash: ref.TxHash, SignerID: ref.SignerID, Height: ref.Height}
	s.mu.Lock()
	p := s.pending[key]
	s.mu.Unlock()
	if p == nil {
		d, err := s.load(ctx, ref.Height)
		if err != nil {
			return bundle.TxStatus{}, false, fmt.Errorf("revisit tx %s: %w", ref.TxHash, err)
		}
		if d != nil {
			for _, txs := range d.txs {
				for _, tx := range txs {
					if tx.hash == ref.TxHash && tx.signerID == ref.SignerID {
						p = newTxProgress(d, tx)
					}
				}
			}
		}
		if p == nil {
			return bundle.TxStatus{}, false, near.UnknownTransaction(ref.TxHash)
		}
	}
	return s.txStatus(ctx, p, s.cfg.RevisitLookahead, false)
}

// txStatus assembles p's status from the documents of blocks up to
// lookahead after its own, no further than the final head. With wait set,
// a status whose receipts may still execute past the head waits for the
// head as rpcsource.Source's re-fetching does: while it grows (it last grew less
// than TxStallWait ago; every waiting status shares one head fetch per
// TxPollInterval), for at most TxFinalWait. A backfill far below a head
// that does not move therefore stores such statuses at once, to be
// revisited; their progress is kept for it.
func (s *Source) txStatus(ctx context.Context, p *txProgress, lookahead int, wait bool) (bundle.TxStatus, bool, error) {
	began := time.Now()
	for {
		head, err := s.knownHead(ctx, false)
		if err != nil {
			return bundle.TxStatus{}, false, err
		}
		limit := p.height + uint64(lookahead)
		st, final, err := s.assemble(ctx, p, min(limit, head))
		if err == nil && (final || !wait || limit <= head) {
			s.keepProgress(p, final)
		}
		if err != nil || final || !wait || limit <= head {
			return st, final, err
		}
		_, _, moved, _ := s.headState()
		if time.Since(began) >= s.cfg.TxFinalWait || time.Since(moved) >= s.cfg.TxStallWait {
			s.logger.Debug("storing a tx status that is not final; it is revisited later", "tx_hash", p.tx.hash, "height", p.height)
			s.keepProgress(p, false)
			return st, false, nil
		}
		if err := retry.Sleep(ctx, s.cfg.TxPollInterval); err != nil {
			return bundle.TxStatus{}, false, err
		}
		if _, err := s.knownHead(ctx, true); err != nil {
			return bundle.TxStatus{}, false, err
		}
	}
}

// keepProgress remembers a status that is not final for its revisit, and
// forgets a final one. The documents a kept status holds parts of are
// pinned: its revisit reads them after their blocks are written.
func (s *Source) keepProgress(p *txProgress, final bool) {
	key := bundle.TxRef{TxHash: p.tx.hash, SignerID: p.tx.signerID, Height: p.height}
	s.mu.Lock()
	defer s.mu.Unlock()
	if final {
		delete(s.pending, key)
		return
	}
	for _, d := range p.docs {
		if !d.buf.pin() {
			return // a revisit reads its documents again
		}
	}
	if len(s.pending) >= maxPending {
		clear(s.pending)
	}
	s.pending[key] = p
}
