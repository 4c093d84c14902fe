package main

import (
	"context"
	"errors"
)

// runRun is written by the owner of this subcommand.
func runRun(ctx context.Context, env *environment, args []string) error {
	return errors.New("nearline run: not built yet")
}
