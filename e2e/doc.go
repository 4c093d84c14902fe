// Package e2e holds end-to-end tests that run the real nearline binary:
// `nearline sim` as the upstream, `nearline index` into a fresh PostgreSQL
// database, and `nearline serve`, then compare what serve answers with what
// the simulator answered for the same requests.
package e2e
