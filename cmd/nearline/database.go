package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/internal/pgcluster"
	"github.com/nearline/nearline/store"
)

// databaseFlags are the flags that say where the archive is: a PostgreSQL
// URL, or else the embedded PostgreSQL in a data directory.
type databaseFlags struct {
	url, dataDir, pgBin string
	dir                 string // the embedded PostgreSQL's directory, once open
}

func registerDatabaseFlags(fs *flag.FlagSet) *databaseFlags {
	f := &databaseFlags{}
	fs.StringVar(&f.url, "database-url", "", "PostgreSQL URL of the archive (default: the embedded PostgreSQL in --data-dir)")
	fs.StringVar(&f.dataDir, "data-dir", "", "without --database-url: directory of the embedded PostgreSQL, "+
		"made and started from the machine's PostgreSQL server binaries, shared by the nearline commands using it "+
		"and stopped by the last to exit (default $XDG_DATA_HOME/nearline, else ~/.local/share/nearline; /var/lib/nearline as root)")
	fs.StringVar(&f.pgBin, "pg-bin", "", "without --database-url: directory of PostgreSQL's initdb and pg_ctl "+
		"(default: "+pgcluster.BinGlob+" of the highest version, else initdb on PATH)")
	return f
}

// parseDatabaseCommand parses the args of a command whose only flags say
// where the archive is (status).
func parseDatabaseCommand(env *environment, name string, args []string) (*databaseFlags, error) {
	fs := newFlagSet(env, name, "[--database-url URL | --data-dir DIR]")
	db := registerDatabaseFlags(fs)
	if err := env.flags().Parse(fs, args, db.check); err != nil {
		return nil, err
	}
	return db, nil
}

// check refuses embedded-database flags beside a URL, where they would be
// ignored.
func (f *databaseFlags) check() error {
	if f.url != "" && (f.dataDir != "" || f.pgBin != "") {
		return errors.New("--data-dir and --pg-bin (NEARLINE_DATA_DIR, NEARLINE_PG_BIN) are for the embedded PostgreSQL; with --database-url they have no use")
	}
	return nil
}

// open returns the archive's URL, --database-url or the embedded
// PostgreSQL's, and a release to call when done with it. The embedded
// PostgreSQL is made when create (otherwise its absence is an error naming
// the commands that make it), started unless another nearline process runs
// it, and stopped by release unless another still uses it.
func (f *databaseFlags) open(ctx context.Context, env *environment, create bool) (string, func(), error) {
	if f.url != "" {
		return f.url, func() {}, nil
	}
	dir := f.dataDir
	if dir == "" {
		var err error
		if dir, err = pgcluster.DefaultDir(env.getenv, os.Geteuid() == 0); err != nil {
			return "", nil, fmt.Errorf("no --database-url, and no --data-dir for the embedded PostgreSQL: %w", err)
		}
	}
	f.dir = dir
	url, release, err := pgcluster.OpenEmbedded(ctx, pgcluster.LocalConfig{Dir: dir, Create: create, Bin: f.pgBin}, env.logger)
	switch {
	case errors.Is(err, pgcluster.ErrNoCluster):
		return "", nil, fmt.Errorf("%w (nearline run, index or migrate makes one there; or give --data-dir or --database-url)", err)
	case err != nil:
		return "", nil, fmt.Errorf("no --database-url, and the embedded PostgreSQL in %s cannot start: %w", dir, err)
	}
	return url, release, nil
}

// startOver says where the open archive is, and how to index into another
// or start it over: for a chain the archive is not of.
func (f *databaseFlags) startOver() string {
	if f.url != "" {
		return fmt.Sprintf("the archive is the database %s: index into another with --database-url, "+
			"or drop this one and create it again (dropdb, createdb) to start over", httpcall.RedactURL(f.url))
	}
	return fmt.Sprintf("the archive is the embedded PostgreSQL in %s: index into another with --data-dir, "+
		"or stop the nearline processes using it and remove that directory (rm -r %s) to start over", f.dir, f.dir)
}

// archiveUse says how a command opens the archive.
type archiveUse struct {
	// migrate: the command may make the embedded PostgreSQL and migrates
	// the database (run, index); otherwise the schema must be there.
	migrate bool
	// noMigrate: the command would migrate, but --no-migrate says not to.
	noMigrate bool
	// url, when set, rewrites the database URL (verify reads read-only).
	url func(string) string
	cfg store.Config
}

// openStore opens the archive the flags name, migrated first or checked
// for the schema as use says (a database without it is refused naming
// `nearline migrate`), and returns it with a close that releases the
// embedded PostgreSQL too.
func (f *databaseFlags) openStore(ctx context.Context, env *environment, use archiveUse) (*store.Store, func(), error) {
	use.migrate = use.migrate && !use.noMigrate
	databaseURL, release, err := f.open(ctx, env, use.migrate)
	if err != nil {
		return nil, nil, err
	}
	if use.migrate {
		if err := store.MigrateLogged(ctx, databaseURL, env.logger); err != nil {
			release()
			return nil, nil, err
		}
	}
	if use.url != nil {
		databaseURL = use.url(databaseURL)
	}
	s, err := store.Open(ctx, databaseURL, use.cfg, env.logger)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("open archive: %w", err)
	}
	closeAll := func() { s.Close(); release() }
	if !use.migrate {
		if err := requireSchema(ctx, s, use.noMigrate); err != nil {
			closeAll()
			return nil, nil, err
		}
	}
	return s, closeAll, nil
}

// requireSchema refuses a database that `nearline migrate` has not brought
// up to this binary's schema, saying so (and, for noMigrate, that the
// command was told not to migrate it).
func requireSchema(ctx context.Context, s *store.Store, noMigrate bool) error {
	err := s.CheckSchema(ctx)
	switch {
	case errors.Is(err, store.ErrNotMigrated) && noMigrate:
		return fmt.Errorf("--no-migrate: %w; run `nearline migrate` on it first (docs/database.md), or leave out --no-migrate", err)
	case errors.Is(err, store.ErrNotMigrated):
		return fmt.Errorf("%w; run `nearline migrate` on it first (or `nearline run`, which migrates)", err)
	}
	return err
}
