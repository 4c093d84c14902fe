package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nearline/nearline/store"

	"github.com/nearline/nearline/internal/envflag"
)

// runMigrate applies the embedded migrations; safe to run twice or from
// several processes at once. With --citus it then places every table on
// the Citus cluster whose coordinator the URL names (store.MigrateDistributed).
func runMigrate(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "migrate", "[--database-url URL | --data-dir DIR] [--citus]")
	db, citus := registerDatabaseFlags(fs), false
	fs.Var(envflag.Bool(&citus), "citus", "then distribute the archive's tables on the Citus cluster whose coordinator "+
		"--database-url names (docs/scaling.md); idempotent, refused on a database without Citus")
	if err := env.flags().Parse(fs, args, db.check); err != nil {
		return err
	}
	databaseURL, release, err := db.open(ctx, env, true)
	if err != nil {
		return err
	}
	defer release()
	if !citus {
		if err := store.MigrateLogged(ctx, databaseURL, env.logger); err != nil {
			return err
		}
		env.logger.Info("database is up to date")
		return nil
	}
	res, err := store.MigrateDistributed(ctx, databaseURL, env.logger)
	if err != nil {
		return err
	}
	env.logger.Info("archive is distributed", "distributed", len(res.Distributed), "already", len(res.Already),
		"not_in_schema", strings.Join(res.Missing, ","))
	return nil
}

// runMigrateStatus prints every embedded migration, applied (and when)
// or pending, and those that cannot be undone.
func runMigrateStatus(ctx context.Context, env *environment, args []string) error {
	db, err := parseDatabaseCommand(env, "migrate status", args)
	if err != nil {
		return err
	}
	databaseURL, release, err := db.open(ctx, env, false)
	if err != nil {
		return err
	}
	defer release()
	list, err := store.Migrations(ctx, databaseURL)
	if err != nil {
		return err
	}
	var applied, pending int
	for _, m := range list {
		state := "pending             "
		if m.Applied {
			state = m.AppliedAt.UTC().Format(time.RFC3339)
			applied++
		} else {
			pending++
		}
		line := fmt.Sprintf("%5d  %s  %s", m.Version, state, m.File)
		if m.Irreversible != "" {
			line += " (no down migration: " + m.Irreversible + ")"
		}
		fmt.Fprintln(env.stdout, line)
	}
	fmt.Fprintf(env.stdout, "%d applied, %d pending", applied, pending)
	if pending > 0 {
		fmt.Fprint(env.stdout, ": nearline migrate applies them")
	}
	fmt.Fprintln(env.stdout)
	return nil
}

// runMigrateDown undoes the migrations above --to, refused before any is
// undone when one of them has no down migration.
func runMigrateDown(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "migrate down", "[--database-url URL | --data-dir DIR] --to VERSION")
	db := registerDatabaseFlags(fs)
	var to *uint64
	fs.Var(envflag.Optional(&to, "version", "a migration version", nil), "to",
		"the version to go back to: every applied migration above it is undone, newest first (required; "+
			"nearline migrate status lists them)")
	err := env.flags().Parse(fs, args, func() error {
		if to == nil {
			return errors.New("--to (or NEARLINE_MIGRATE_DOWN_TO) is required: the version to go back to")
		}
		return db.check()
	})
	if err != nil {
		return err
	}
	databaseURL, release, err := db.open(ctx, env, false)
	if err != nil {
		return err
	}
	defer release()
	if err := store.MigrateDown(ctx, databaseURL, int64(*to), env.logger); err != nil {
		return err
	}
	env.logger.Info("database is migrated down", "version", *to)
	return nil
}
