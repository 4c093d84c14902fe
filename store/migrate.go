package store

import (
	"context"
	"fmt"
	"log/slog"
	"math"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/migrations"
)

// migrationLockID is the advisory lock goose's session locker holds while
// migrating, so two processes migrating at once take turns.
const migrationLockID = 7_146_233_001

// Migrate applies the embedded migrations to the database at url. It is
// idempotent and safe to run from several processes at once.
func Migrate(ctx context.Context, url string) error {
	return MigrateLogged(ctx, url, nil)
}

// MigrateLogged is Migrate, logging each migration applied to logger.
func MigrateLogged(ctx context.Context, url string, logger *slog.Logger) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("connect for migration: %w", err)
	}
	defer pool.Close()
	return MigratePool(ctx, pool, logger)
}

// MigratePool applies the embedded migrations through pool.
func MigratePool(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	return migrateTo(ctx, pool, logger, math.MaxInt64)
}

// migrateTo applies the embedded migrations up to version.
func migrateTo(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger, version int64) error {
	logger = logs.OrDiscard(logger)
	provider, closeDB, err := newProvider(pool)
	if err != nil {
		return err
	}
	defer closeDB()
	results, err := provider.UpTo(ctx, version)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	for _, r := range results {
		logger.Info("migration applied", "version", r.Source.Version, "path", r.Source.Path, "elapsed", r.Duration)
	}
	return nil
}

// newProvider is goose's provider of the embedded migrations over pool,
// and what closes it. While it runs a migration it holds the migration
// lock, polled every second for up to 10 minutes: a second migrator waits
// for the first and then finds nothing to do.
func newProvider(pool *pgxpool.Pool) (*goose.Provider, func(), error) {
	db := stdlib.OpenDBFromPool(pool)
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID), lock.WithLockTimeout(1, 600))
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("create migration locker: %w", err)
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS,
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("create migration provider: %w", err)
	}
	return provider, func() { db.Close() }, nil
}
