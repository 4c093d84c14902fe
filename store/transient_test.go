package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

func TestIsTransient(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("commit: %w", &pgconn.PgError{Code: code}) }
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"nil":                {nil, false},
		"admin shutdown":     {pg("57P01"), true},
		"cannot connect now": {pg("57P03"), true},
		"too many conns":     {pg("53300"), true},
		"connection failure": {pg("08006"), true},
		"deadlock":           {pg("40P01"), true},
		"unique violation":   {pg("23505"), false},
		"invalid json":       {pg("22P02"), false},
		"undefined table":    {pg("42P01"), false},
		"unexpected eof":     {fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		"context cancelled":  {fmt.Errorf("commit: %w", context.Canceled), false},
		"plain error":        {errors.New("encode block 5: bad"), false},
		"not found":          {fmt.Errorf("x: %w", store.ErrNotFound), false},
		// A COPY met a conflict the staging path handles, and the
		// savepoint's rollback found the connection terminated: the
		// batch is tried again, not failed.
		"conflict, then terminated": {fmt.Errorf("copy contract_codes: %w", errors.Join(
			&pgconn.PgError{Code: "23505"}, &pgconn.PgError{Code: "57P01"})), true},
		"conflict, then eof": {fmt.Errorf("copy x: %w", errors.Join(
			&pgconn.PgError{Code: "23505"}, fmt.Errorf("rollback: %w", io.ErrUnexpectedEOF))), true},
		"two data errors":   {errors.Join(pg("23505"), pg("22P02")), false},
		"joined, cancelled": {errors.Join(pg("57P01"), context.Canceled), false},
		"empty code":        {&pgconn.PgError{}, false},
	} {
		require.Equal(t, tc.want, store.IsTransient(tc.err), name)
	}
}

func TestTerminatedConnectionIsTransient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	conn, err := s.Pool().Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	var pid int
	require.NoError(t, conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
	other, err := s.Pool().Acquire(ctx)
	require.NoError(t, err)
	_, err = other.Exec(ctx, `SELECT pg_terminate_backend($1::int)`, pid)
	other.Release()
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `SELECT 1`)
	require.Error(t, err)
	require.True(t, store.IsTransient(err), "error after termination: %v (%T)", err, err)
}
