// Package e2ekit is what end-to-end tests (e2e/, e2e/scale/) share: the
// nearline binary built once per test package, its subcommands run as
// child processes (their listen addresses read from their logs), a JSON-RPC
// client, fresh databases, and the differential tests' request lists and
// comparison (every answer of one node against another's).
//
// Everything here is for tests: helpers take a testing.TB and fail the test
// on error. Waits poll with a deadline (internal/wait), never sleep.
package e2ekit
