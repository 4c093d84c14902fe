package main

import (
	"context"
	"errors"
)

// runStatus is written by the owner of this subcommand.
func runStatus(ctx context.Context, env *environment, args []string) error {
	return errors.New("nearline status: not built yet")
}
