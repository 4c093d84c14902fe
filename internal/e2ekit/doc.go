// Package e2ekit is what the end-to-end tests (e2e/, e2e/reliability/,
// e2e/scale/, all behind the build tag e2e) share: the nearline binary
// built once per test package, its subcommands run as child processes
// (their listen addresses read from their logs), a JSON-RPC client, fresh
// databases, a seeded sample of the differential requests (verify's plan,
// as the in-process tests ask it whole) and their comparison (every answer
// of one node against another's).
//
// Everything here is for tests: helpers take a testing.TB and fail the test
// on error. Waits poll with a deadline (internal/wait), never sleep.
package e2ekit
