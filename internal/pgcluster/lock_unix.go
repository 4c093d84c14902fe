//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/nearline/nearline/internal/retry"
)

// lockPoll is how often lockFile tries again for a lock another process
// holds.
const lockPoll = 50 * time.Millisecond

// lockFile opens path (making it) and flocks it, exclusive or shared,
// waiting until ctx ends for a process that holds it otherwise. Closing
// the file drops the lock; so does the process's end.
func lockFile(ctx context.Context, path string, exclusive bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	policy := retry.Policy{
		Backoff:   retry.Backoff{Base: lockPoll, Max: lockPoll, Jitter: retry.None},
		Retryable: func(err error) bool { return errors.Is(err, errHeld) },
	}
	err = policy.Do(ctx, func(context.Context) error {
		ok, err := tryLock(f, exclusive)
		if err == nil && !ok {
			return errHeld
		}
		return err
	})
	switch {
	case err == nil:
		return f, nil
	case ctx.Err() != nil:
		f.Close()
		return nil, fmt.Errorf("wait for %s: %w", path, ctx.Err())
	}
	f.Close()
	return nil, err
}

// errHeld is a lock another process holds otherwise: lockFile tries again.
var errHeld = errors.New("lock held by another process")

// tryLock flocks f, exclusive or shared, without waiting: false when
// another process holds it otherwise. A lock f holds already is converted.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	}
	return false, fmt.Errorf("flock %s: %w", f.Name(), err)
}
