package main

import (
	"context"
	"fmt"

	"github.com/nearline/nearline/store"
)

// runMigrate applies the embedded migrations; safe to run twice or from
// several processes at once.
func runMigrate(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "migrate", "--database-url URL")
	databaseURL := stringFlag(fs, env, "database-url", "NEARLINE_DATABASE_URL", "", "PostgreSQL URL of the archive (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *databaseURL == "" {
		fmt.Fprintln(fs.Output(), "nearline migrate: --database-url (or NEARLINE_DATABASE_URL) is required")
		fs.Usage()
		return errUsage
	}
	if err := store.MigrateLogged(ctx, *databaseURL, env.logger); err != nil {
		return err
	}
	env.logger.Info("database is up to date")
	return nil
}
