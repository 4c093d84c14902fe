package main

import (
	"context"
	"errors"
)

// runServe is written by the owner of this subcommand.
func runServe(ctx context.Context, env *environment, args []string) error {
	return errors.New("nearline serve: not built yet")
}
