package main

import (
	"context"

	"github.com/nearline/nearline/store"
)

// runMigrate applies the embedded migrations; safe to run twice or from
// several processes at once.
func runMigrate(ctx context.Context, env *environment, args []string) error {
	db, err := parseDatabaseCommand(env, "migrate", args)
	if err != nil {
		return err
	}
	databaseURL, release, err := db.open(ctx, env, true)
	if err != nil {
		return err
	}
	defer release()
	if err := store.MigrateLogged(ctx, databaseURL, env.logger); err != nil {
		return err
	}
	env.logger.Info("database is up to date")
	return nil
}
