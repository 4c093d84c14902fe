package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/nearline/nearline/migrations"
)

// ErrNotMigrated is a database without the archive's schema, or with an
// older one than this binary's migrations: Migrate brings it up to date.
var ErrNotMigrated = errors.New("the database is not migrated")

// undefinedTable is PostgreSQL's undefined_table error code.
const undefinedTable = "42P01"

// CheckSchema returns an error wrapping ErrNotMigrated when the database
// lacks the migrations this binary embeds (it has no schema at all, or an
// older one). A newer schema, migrated by a newer binary, passes.
func (s *Store) CheckSchema(ctx context.Context) error {
	want, err := LatestMigration()
	if err != nil {
		return err
	}
	var have int64
	err = s.pool.QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&have)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == undefinedTable:
		return fmt.Errorf("%w: it holds no Nearline schema (no goose_db_version table)", ErrNotMigrated)
	case err != nil:
		return fmt.Errorf("read the schema version: %w", err)
	case have < want:
		return fmt.Errorf("%w: its schema is at version %d, this binary's at %d", ErrNotMigrated, have, want)
	}
	return nil
}

// LatestMigration is the version of the newest migration embedded in the
// binary (the number its file name starts with).
func LatestMigration() (int64, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return 0, fmt.Errorf("list migrations: %w", err)
	}
	var latest int64
	for _, e := range entries {
		prefix, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		v, err := strconv.ParseInt(prefix, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s: no version number: %w", e.Name(), err)
		}
		latest = max(latest, v)
	}
	return latest, nil
}
