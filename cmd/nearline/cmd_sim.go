package main

import (
	"context"
	"errors"
)

// runSim is written by the owner of this subcommand.
func runSim(ctx context.Context, env *environment, args []string) error {
	return errors.New("nearline sim: not built yet")
}
