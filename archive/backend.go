package archive

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/store"
)

// Store is the store read API the archive answers from
// (*store.Store implements it). Every "not there" answer satisfies
// errors.Is(err, store.ErrNotFound).
type Store interface {
	LatestBlock(ctx context.Context) (height uint64, hash string, err error)
	EarliestBlock(ctx context.Context) (height uint64, hash string, err error)
	// Ranges returns the indexers' ranges (heights indexed), lowest first.
	Ranges(ctx context.Context) ([]bundle.Range, error)
	BlockView(ctx context.Context, id near.BlockID) (json.RawMessage, error)
	BlockStamp(ctx context.Context, id near.BlockID) (near.BlockStamp, error)
	ChunkView(ctx context.Context, chunkHash string) (json.RawMessage, error)
	ChunkHashAt(ctx context.Context, blockHeight uint64, shardID uint64) (string, error)
	ChunkCongestion(ctx context.Context, chunkHash string) (*near.CongestionInfo, uint64, error)
	BlockEffects(ctx context.Context, height uint64) ([]near.StateChangeKindView, error)
	StateChangesJSON(ctx context.Context, height uint64, changeTypes []string, accountIDs []string) ([]json.RawMessage, error)
	AccountAt(ctx context.Context, accountID string, height uint64) (near.Account, error)
	AccessKeyAt(ctx context.Context, accountID, publicKey string, height uint64) (near.AccessKeyView, error)
	AccessKeysAt(ctx context.Context, accountID string, height uint64) ([]near.AccessKeyInfoView, error)
	ContractCodeAt(ctx context.Context, accountID string, height uint64) (code []byte, codeHash string, err error)
	GlobalContractCodeIn(ctx context.Context, id near.GlobalContractID, windows []store.ShardWindow) (code []byte, codeHash string, err error)
	ShardLayouts(ctx context.Context) ([]store.LayoutSpan, error)
	ContractDataAt(ctx context.Context, accountID string, key []byte, height uint64) ([]byte, error)
	ContractStateAt(ctx context.Context, accountID string, prefix []byte, height uint64, limitBytes int) ([]near.StateItem, error)
	TxStatus(ctx context.Context, txHash, signerID string, withReceipts bool) (json.RawMessage, error)
	Receipt(ctx context.Context, receiptID string) (json.RawMessage, error)
	ReceiptTx(ctx context.Context, receiptID string) (txHash, signerID string, err error)
	GenesisConfig(ctx context.Context) (json.RawMessage, error)
	ProtocolConfigAt(ctx context.Context, height uint64) (json.RawMessage, error)
	HistorySource(ctx context.Context) (height uint64, source string, err error)
	AccountBase(ctx context.Context, accountID string) (height uint64, source string, err error)
	CodeByHash(ctx context.Context, codeHash string) ([]byte, error)
	// ReplicaLag reports whether the database is a streaming replica (in
	// recovery) and, if so, how far its replay trails the primary.
	ReplicaLag(ctx context.Context) (lag time.Duration, replica bool, err error)
	// EpochStart returns the lowest stored block of the epoch of the block
	// at height, and whether the block before it is stored too.
	EpochStart(ctx context.Context, height uint64) (start uint64, prevStored bool, err error)
}

var _ Store = (*store.Store)(nil)

// Config tunes the archive Backend. The zero value is usable.
type Config struct {
	// ViewStateLimit is view_state's limit, as a regular node applies it:
	// an account whose storage usage minus its code size exceeds it gets
	// TOO_LARGE_CONTRACT_STATE. Default DefaultViewStateLimit (50 kB);
	// negative means no limit.
	ViewStateLimit int
	// RPCAddr is reported as `rpc_addr` by `status`. Default: left out, as
	// nearcore leaves it out for a node without one.
	RPCAddr string
	// Version is reported as the node version by `status`. Default
	// DefaultVersion.
	Version string
	// Commit is reported as the version's `commit` by `status`. Default: the
	// VCS revision the binary was built from, or "unknown".
	Commit string
	// CodeCacheSize is how many contracts' code (by hash) are kept in
	// memory for view calls. Default DefaultCodeCacheSize; -1 disables the
	// cache.
	CodeCacheSize int
	// HealthMaxLag makes `health` fail with NO_NEW_BLOCKS when the latest
	// indexed block's timestamp is older than this, or when the database is
	// a replica whose replay trails its primary by more than this. Default
	// 0: off (an archive of a chain that stopped is still healthy).
	HealthMaxLag time.Duration
}

// buildCommit returns the VCS revision recorded in the running binary, or
// "unknown" (a test binary, or a build outside a checkout).
func buildCommit() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// DefaultViewStateLimit is a regular nearcore node's view_state limit.
const DefaultViewStateLimit = 50_000

// DefaultCodeCacheSize is how many contracts' code the archive keeps in
// memory by default.
const DefaultCodeCacheSize = 64

// DefaultVersion is the node version `status` reports by default.
const DefaultVersion = "nearline"

func (c Config) withDefaults() Config {
	c.ViewStateLimit = cmp.Or(c.ViewStateLimit, DefaultViewStateLimit)
	c.Version = cmp.Or(c.Version, DefaultVersion)
	if c.Commit == "" {
		c.Commit = buildCommit()
	}
	c.CodeCacheSize = cmp.Or(c.CodeCacheSize, DefaultCodeCacheSize)
	return c
}

// Validate reports a setting out of range, after defaults are applied; New
// returns the same error.
func (c Config) Validate() error { return c.withDefaults().validate() }

func (c Config) validate() error {
	var errs []error
	if c.ViewStateLimit < -1 {
		errs = append(errs, fmt.Errorf("view state limit %d: want -1 (no limit), 0 (the default) or a number of bytes", c.ViewStateLimit))
	}
	if c.CodeCacheSize < -1 {
		errs = append(errs, fmt.Errorf("code cache size %d: want -1 (no cache), 0 (the default) or a number of contracts", c.CodeCacheSize))
	}
	if c.HealthMaxLag < 0 {
		errs = append(errs, fmt.Errorf("health max lag %s: want 0 (off) or more", c.HealthMaxLag))
	}
	return errors.Join(errs...)
}

// Backend is the rpcserve.Backend that answers from the Postgres archive.
//
// Block selection: `final`, `near-final` and `optimistic` all select the
// latest indexed block (the archive only holds final blocks). A height the
// chain skipped, one above the archive's head, or an unknown hash is
// UNKNOWN_BLOCK; a height below the archive's first block is forwarded
// upstream (rpcserve.ForwardError) or refused with rpcserve.BeforeArchive.
type Backend struct {
	store   Store
	vm      *nearvm.Runtime
	cfg     Config
	logger  *slog.Logger
	started time.Time

	codes *codeCache

	mu           sync.Mutex
	genesisCache *genesisFacts
	historyStart *historyStart
	// segments are the indexed segments last read (ranges only grow, so
	// an old read errs only towards "not indexed", and is read again then).
	segs []store.Segment
	// lastEpoch is the epoch start status found last (it never changes).
	lastEpoch epochStart
}

var _ rpcserve.Backend = (*Backend)(nil)

// New returns the archive Backend over st, or the error of an invalid
// cfg. vm runs call_function (nil: call_function fails); it is long-lived
// so compiled contracts stay cached. A nil logger discards.
func New(st Store, vm *nearvm.Runtime, cfg Config, logger *slog.Logger) (*Backend, error) {
	if st == nil {
		return nil, errors.New("new archive backend: no store")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("new archive backend: %w", err)
	}
	logger = logs.OrDiscard(logger)
	return &Backend{store: st, vm: vm, cfg: cfg, logger: logger, started: time.Now(), codes: newCodeCache(cfg.CodeCacheSize)}, nil
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// readFailed is a failed store read as the archive answers it: what the
// store has not found (older than the archive's first block, or not
// indexed yet) becomes a ForwardError giving reason, for an upstream may
// hold it; any other error is wrapped as what.
func readFailed(err error, reason *near.Error, what string) error {
	if isNotFound(err) {
		return &rpcserve.ForwardError{Reason: reason}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// noProtocolConfig is the reason given when the protocol config of a
// block's epoch is not in the archive.
func noProtocolConfig(height uint64) *near.Error {
	return near.InternalError(fmt.Sprintf("The protocol config of block #%d is not in the archive", height))
}
