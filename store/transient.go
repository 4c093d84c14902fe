package store

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// IsTransient reports whether err means the database was unavailable for a
// moment (connection terminated or refused, server shutting down or
// restarting, too many connections, a serialization failure or deadlock):
// the same operation may succeed when tried again. Context cancellation
// and errors about the data itself are not transient.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", // connection exception
			"53", // insufficient resources (too many connections, out of memory)
			"57", // operator intervention: admin/crash shutdown, cannot connect now, statement timeout
			"40": // transaction rollback: serialization failure, deadlock
			return true
		}
		return false
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var netErr net.Error
	var connectErr *pgconn.ConnectError
	return errors.As(err, &netErr) || errors.As(err, &connectErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}
