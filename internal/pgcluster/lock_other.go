//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package pgcluster

import (
	"context"
	"errors"
	"os"
)

var errNoFlock = errors.New("a local PostgreSQL cluster needs flock(2): Linux, macOS or a BSD")

func lockFile(context.Context, string, bool) (*os.File, error) { return nil, errNoFlock }

func tryLock(*os.File, bool) (bool, error) { return false, errNoFlock }
