package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nearline/nearline/internal/bounds"
	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/internal/packed"
)

// ErrNotFound is returned (wrapped) by every read that finds nothing.
var ErrNotFound = errors.New("not found")

// ErrTooLarge is returned by ContractStateAt when the state under the prefix
// exceeds the byte limit.
var ErrTooLarge = errors.New("contract state too large")

// Defaults of Config.
const (
	DefaultMaxConns         = 10
	DefaultApplicationName  = "nearline"
	DefaultStatementTimeout = 60 * time.Second
)

// Config tunes the connection pool. The zero value is usable.
type Config struct {
	// MaxConns is the pool's maximum size. Default DefaultMaxConns.
	MaxConns int32
	// MinConns is the number of idle connections kept open. Default 0.
	MinConns int32
	// ApplicationName is reported to Postgres (pg_stat_activity). Default
	// DefaultApplicationName.
	ApplicationName string
	// StatementTimeout bounds every statement. Default
	// DefaultStatementTimeout; -1 disables it.
	StatementTimeout time.Duration
	// Cursor names the indexer_cursor row (the range) Commit advances:
	// `--cursor`. Default DefaultCursor.
	Cursor string
	// ReadOnly, when true, opens every session with
	// default_transaction_read_only on, so that no statement can write
	// (SQLSTATE 25006), whatever the role may do: `nearline serve`.
	// Default false.
	ReadOnly bool
	// SkipEvents, when true, leaves the explorer tables (ft_events,
	// nft_events, mt_events, account_activity) unwritten: `--events=false`.
	// Default false: Commit writes them.
	SkipEvents bool
}

func (c Config) withDefaults() Config {
	c.MaxConns = cmp.Or(c.MaxConns, DefaultMaxConns)
	c.ApplicationName = cmp.Or(c.ApplicationName, DefaultApplicationName)
	c.StatementTimeout = cmp.Or(c.StatementTimeout, DefaultStatementTimeout)
	c.Cursor = cmp.Or(c.Cursor, DefaultCursor)
	return c
}

func (c Config) validate() error {
	var minConns error
	if c.MinConns < 0 || c.MinConns > c.MaxConns {
		minConns = fmt.Errorf("min conns %d: want 0 to max conns %d", c.MinConns, c.MaxConns)
	}
	return errors.Join(
		bounds.AtLeast("max conns", c.MaxConns, 1),
		minConns,
		ValidCursorName(c.Cursor),
	)
}

// Store is the archive. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	logger *slog.Logger
	codec  *packed.Codec
	// cursor is the indexer_cursor row Commit advances.
	cursor string
	// events says whether Commit writes the explorer tables.
	events bool
	// partitions are the height ranges whose partitions exist.
	partitions partitions
	// labels are the enum labels known to exist.
	labels labels
	// numbers are the account numbers reads have looked up.
	numbers accountNumbers
}

// Open connects to the database at url; logger receives the store's logs
// (nil: none). It does not migrate; call Migrate first.
func Open(ctx context.Context, url string, cfg Config, logger *slog.Logger) (*Store, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	pcfg.MaxConns = cfg.MaxConns
	pcfg.MinConns = cfg.MinConns
	rt := pcfg.ConnConfig.RuntimeParams
	if rt["application_name"] == "" {
		rt["application_name"] = cfg.ApplicationName
	}
	if cfg.StatementTimeout > 0 {
		rt["statement_timeout"] = strconv.FormatInt(cfg.StatementTimeout.Milliseconds(), 10)
	}
	if cfg.ReadOnly {
		rt["default_transaction_read_only"] = "on"
	}
	codec, err := packed.NewCodec()
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping database: %w", err)
	}
	return &Store{pool: pool, logger: logs.OrDiscard(logger), codec: codec, cursor: cfg.Cursor, events: !cfg.SkipEvents}, nil
}

// Close closes the pool, waiting for connections in use.
func (s *Store) Close() { s.pool.Close() }

// Pool returns the underlying pool, for tests and analytics tools.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// notFound maps pgx.ErrNoRows to ErrNotFound, wrapping what was looked up.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return fmt.Errorf("read %s: %w", what, err)
}
