package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"

	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/migrations"
)

// ErrIrreversible is a migration whose down migration refuses to run: what
// it changed cannot be rebuilt, and going back means restoring a backup or
// indexing again.
var ErrIrreversible = errors.New("cannot be migrated down")

// Migration is one embedded migration and whether the database has it.
type Migration struct {
	Version   int64
	File      string // 00011_layout3.sql
	Applied   bool
	AppliedAt time.Time // when Applied
	// Irreversible, when set, is why the migration cannot be undone: the
	// message its down migration refuses with.
	Irreversible string
}

// Migrations lists the embedded migrations, oldest first, and which of
// them the database at url has applied (none when it was never migrated).
func Migrations(ctx context.Context, url string) ([]Migration, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	return listMigrations(ctx, pool)
}

func listMigrations(ctx context.Context, pool *pgxpool.Pool) ([]Migration, error) {
	provider, closeDB, err := newProvider(pool)
	if err != nil {
		return nil, err
	}
	defer closeDB()
	var migrated bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('goose_db_version') IS NOT NULL`).Scan(&migrated); err != nil {
		return nil, fmt.Errorf("look for goose_db_version: %w", err)
	}
	var statuses []*goose.MigrationStatus
	if migrated {
		if statuses, err = provider.Status(ctx); err != nil {
			return nil, fmt.Errorf("read migration status: %w", err)
		}
	} else {
		for _, src := range provider.ListSources() {
			statuses = append(statuses, &goose.MigrationStatus{Source: src, State: goose.StatePending})
		}
	}
	list := make([]Migration, len(statuses))
	for i, st := range statuses {
		m := Migration{Version: st.Source.Version, File: path.Base(st.Source.Path),
			Applied: st.State == goose.StateApplied, AppliedAt: st.AppliedAt}
		if m.Irreversible, err = irreversible(m.File); err != nil {
			return nil, err
		}
		list[i] = m
	}
	return list, nil
}

// irreversible is the message the down migration of file refuses with
// (RAISE EXCEPTION), or "" when it has one that runs.
func irreversible(file string) (string, error) {
	sql, err := fs.ReadFile(migrations.FS, file)
	if err != nil {
		return "", fmt.Errorf("read migration %s: %w", file, err)
	}
	_, down, _ := strings.Cut(string(sql), "-- +goose Down")
	_, msg, ok := strings.Cut(down, "RAISE EXCEPTION '")
	if !ok {
		return "", nil
	}
	msg, _, _ = strings.Cut(msg, "'")
	return msg, nil
}

// MigrateDown undoes the database's applied migrations above version,
// newest first, each in its own transaction, logging each to logger. It
// is refused before any is undone when one of them is irreversible
// (ErrIrreversible, naming it).
func MigrateDown(ctx context.Context, url string, version int64, logger *slog.Logger) error {
	logger = logs.OrDiscard(logger)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	list, err := listMigrations(ctx, pool)
	if err != nil {
		return err
	}
	for _, m := range list {
		if m.Applied && m.Version > version && m.Irreversible != "" {
			return fmt.Errorf("migration %s %w: %s", m.File, ErrIrreversible, m.Irreversible)
		}
	}
	provider, closeDB, err := newProvider(pool)
	if err != nil {
		return err
	}
	defer closeDB()
	results, err := provider.DownTo(ctx, version)
	for _, r := range results {
		logger.Info("migration undone", "version", r.Source.Version, "path", r.Source.Path, "elapsed", r.Duration)
	}
	if err != nil {
		return fmt.Errorf("undo migrations: %w", err)
	}
	return nil
}
