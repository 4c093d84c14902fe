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
//
// A joined error is transient when any of its parts is: a COPY that met an
// expected conflict and whose savepoint could not be rolled back because
// the connection was terminated carries both, and the conflict is handled
// on the next try.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	return anyInTree(err, transientPart)
}

// transientPart judges one error of a chain without unwrapping it.
func transientPart(err error) bool {
	switch e := err.(type) {
	case *pgconn.PgError:
		switch e.Code[:min(2, len(e.Code))] {
		case "08", // connection exception
			"53", // insufficient resources (too many connections, out of memory)
			"57", // operator intervention: admin/crash shutdown, cannot connect now, statement timeout
			"40": // transaction rollback: serialization failure, deadlock
			return true
		}
		return false
	case *pgconn.ConnectError, net.Error:
		return true
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	switch err {
	case io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.EPIPE:
		return true
	}
	return false
}

// anyInTree reports whether f holds for err or any error it wraps, through
// both Unwrap() error and Unwrap() []error.
func anyInTree(err error, f func(error) bool) bool {
	for err != nil {
		if f(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if anyInTree(e, f) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return false
		}
	}
	return false
}
