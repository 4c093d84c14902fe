package indexer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/bounds"
	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/internal/outage"
	"github.com/nearline/nearline/store"
)

// ErrContinuity is returned (wrapped) when a block does not link to the last
// committed block, or a batch's edge to the range of another cursor it
// meets. Nothing from that block on is written.
var ErrContinuity = store.ErrContinuity

// Source fetches the chain: the indexer's view of an upstream node. It is
// the indexer's whole contract with the upstream: nothing else is looked
// for.
type Source interface {
	// FinalHead returns the height of the latest final block.
	FinalHead(ctx context.Context) (uint64, error)
	// Bundle fetches the block at height and everything below it. It
	// returns ErrNoBlock when the upstream has no block at height.
	Bundle(ctx context.Context, height uint64) (*bundle.Bundle, error)
	// GenesisConfig returns the genesis_config result.
	GenesisConfig(ctx context.Context) (json.RawMessage, error)
	// Prepare is called at the start of each Run with the lowest height the
	// archive will hold (its earliest stored block, or the first height to
	// index). A block that repeats a chunk included below it (a missing
	// chunk) carries that chunk in Bundle.OlderChunks: no earlier bundle
	// did.
	Prepare(chunkFloor uint64)
	// TxStatus fetches a stored transaction's status again; final reports
	// that the upstream now calls it FINAL. A *near.Error (the upstream no
	// longer has it) leaves the stored status as it is.
	TxStatus(ctx context.Context, ref bundle.TxRef) (st bundle.TxStatus, final bool, err error)
}

// Sink stores what the indexer fetched (*store.Store implements it). It is
// the indexer's whole contract with the archive, in bundle's types only, so
// a sink other than the store needs nothing of it.
type Sink interface {
	// Range returns the range of the indexer's cursor; ok is false before
	// its first commit.
	Range(ctx context.Context) (r bundle.Range, ok bool, err error)
	// LinkBelow returns where heights from start on join the range below
	// them (the block the next block must link to); ok is false when
	// start begins a range.
	LinkBelow(ctx context.Context, start uint64) (l bundle.Link, ok bool, err error)
	// RangeAbove returns the lowest range of another cursor that covers
	// height or starts above it: where this indexer's range meets it.
	RangeAbove(ctx context.Context, height uint64) (r bundle.Range, ok bool, err error)
	// Prepare makes bundles (ascending heights) into a batch for Write
	// (its Prepared is the sink's own), without the database: the loop
	// prepares a batch while the one before it is written.
	Prepare(bundles []bundle.Bundle) (*bundle.Batch, error)
	// Write writes a prepared batch and moves the cursor to its last
	// block, atomically; a failed Write may be retried with the same
	// batch. It takes only batches of its own Prepare. (A wrapper around
	// *store.Store that intercepts writes overrides Write: Commit is not
	// called.)
	Write(ctx context.Context, b *bundle.Batch) (bundle.CommitStats, error)
	// PutGenesisConfig stores the genesis_config result.
	PutGenesisConfig(ctx context.Context, cfg json.RawMessage) error
	// PendingTxStatuses returns up to limit transaction statuses stored
	// before they were FINAL, included at or below maxHeight.
	PendingTxStatuses(ctx context.Context, maxHeight uint64, limit int) ([]bundle.TxRef, error)
	// UpdateTxStatus replaces a stored transaction status with a newer one.
	UpdateTxStatus(ctx context.Context, ref bundle.TxRef, st bundle.TxStatus) error
}

var _ Sink = (*store.Store)(nil)

// Defaults of Config; `nearline index` flags use them too.
const (
	DefaultWorkers          = 32
	DefaultBatchSize        = 50
	DefaultPollInterval     = 500 * time.Millisecond
	DefaultProgressInterval = 5 * time.Second
	DefaultRevisitInterval  = 10 * time.Second
	DefaultDatabaseRetry    = 10 * time.Minute
	// DefaultMemoryBudget keeps a backfill of mainnet's heaviest blocks
	// within 512 MiB of RSS (docs/performance-ingest.md).
	DefaultMemoryBudget     = 192 << 20
	DefaultUpstreamPatience = 5 * time.Minute
)

// Config tunes the follow loop. The zero value follows the head from the
// cursor (or from genesis on an empty archive).
type Config struct {
	// From is the first height to index. Default: after the cursor, or the
	// genesis height on an empty archive (a new cursor on an archive
	// holding other ranges needs it). It may not leave a gap above the
	// cursor, nor start below the cursor's range; at or below the cursor
	// it re-indexes.
	From *uint64
	// To, when set, is the last height: Run returns nil once it is
	// committed (if the chain skipped To, once the next block linking over
	// it is). Unset: follow the head until ctx ends. Either way the run
	// ends where its range meets another cursor's range above it, once the
	// two are linked.
	To *uint64
	// Workers bounds concurrent block fetches. Default DefaultWorkers: a block's
	// fetch is a chain of dependent calls (block, chunks, tx statuses), so
	// many blocks are needed to keep the upstream busy; rpcsource.Source bounds
	// the calls in flight (rpcsource.Config.MaxInFlight).
	Workers int
	// BatchSize is the number of heights fetched and committed together.
	// Default DefaultBatchSize.
	BatchSize int
	// PollInterval is how often the final head is polled while caught up.
	// Default DefaultPollInterval.
	PollInterval time.Duration
	// ProgressInterval is how often a progress line is logged. Default
	// DefaultProgressInterval.
	ProgressInterval time.Duration
	// RevisitInterval is how often, between commits, transaction statuses
	// stored before they were FINAL are fetched again. Default
	// DefaultRevisitInterval.
	RevisitInterval time.Duration
	// DatabaseRetry bounds how long a Sink call failing with a transient
	// database error (store.IsTransient: connection terminated, server
	// restarting, ...) is retried with backoff before Run gives up.
	// Default DefaultDatabaseRetry.
	DatabaseRetry time.Duration
	// MemoryBudget bounds, in bytes, the blocks the pipeline holds at once
	// (being fetched, fetched, prepared and being written), estimated by
	// their weight: batches are cut short to stay within it, whatever the
	// blocks weigh. Default DefaultMemoryBudget.
	MemoryBudget int64
	// UpstreamPatience bounds, with To set, how long a Source call failing
	// because the upstream is unavailable (outage.Unavailable) is retried
	// before Run gives up. Without To, an outage is waited out however
	// long it lasts. Default DefaultUpstreamPatience.
	UpstreamPatience time.Duration
	// Upstream runs the Source calls through outages and knows whether the
	// upstream is reachable (a health check may share it). Default: one of
	// the Indexer's own, logging to its logger.
	Upstream *outage.Tracker
	// Metrics, when set, receives the loop's metrics.
	Metrics *Metrics
}

func (c Config) withDefaults() Config {
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.BatchSize = cmp.Or(c.BatchSize, DefaultBatchSize)
	c.PollInterval = cmp.Or(c.PollInterval, DefaultPollInterval)
	c.ProgressInterval = cmp.Or(c.ProgressInterval, DefaultProgressInterval)
	c.RevisitInterval = cmp.Or(c.RevisitInterval, DefaultRevisitInterval)
	c.DatabaseRetry = cmp.Or(c.DatabaseRetry, DefaultDatabaseRetry)
	c.MemoryBudget = cmp.Or(c.MemoryBudget, DefaultMemoryBudget)
	c.UpstreamPatience = cmp.Or(c.UpstreamPatience, DefaultUpstreamPatience)
	return c
}

func (c Config) validate() error {
	var budget, span error
	if c.MemoryBudget < 1<<20 {
		budget = fmt.Errorf("memory budget %d bytes: want at least 1 MiB", c.MemoryBudget)
	}
	if c.From != nil && c.To != nil && *c.To < *c.From {
		span = fmt.Errorf("--to %d is below --from %d", *c.To, *c.From)
	}
	return errors.Join(
		bounds.AtLeast("workers", c.Workers, 1),
		bounds.AtLeast("batch size", c.BatchSize, 1),
		bounds.NotNegative("poll interval", c.PollInterval),
		bounds.NotNegative("progress interval", c.ProgressInterval),
		bounds.NotNegative("revisit interval", c.RevisitInterval),
		budget,
		bounds.NotNegative("database retry", c.DatabaseRetry),
		bounds.NotNegative("upstream patience", c.UpstreamPatience),
		span,
	)
}

// Indexer is the follow loop.
type Indexer struct {
	cfg    Config
	src    Source
	sink   Sink
	logger *slog.Logger
	// unknownSeen holds the kinds of unmodelled variants already logged.
	unknownSeen map[string]bool
	budget      *budget
	// stages is the pipeline's wall time by stage, logged at the end.
	stages stages
}

// New returns an indexer reading src and writing sink.
func New(cfg Config, src Source, sink Sink, logger *slog.Logger) (*Indexer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("configure indexer: %w", err)
	}
	logger = logs.OrDiscard(logger)
	if cfg.Upstream == nil {
		cfg.Upstream = outage.New(outage.Config{}, logger)
	}
	return &Indexer{cfg: cfg, src: src, sink: sink, logger: logger, unknownSeen: map[string]bool{},
		budget: newBudget(cfg.MemoryBudget, cfg.Workers)}, nil
}
