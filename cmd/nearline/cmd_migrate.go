package main

import (
	"context"
	"errors"
)

// runMigrate is written by the owner of this subcommand.
func runMigrate(ctx context.Context, env *environment, args []string) error {
	return errors.New("nearline migrate: not built yet")
}
