// Package scale holds end-to-end tests of Nearline's ways to scale out, on
// the real binary (built once, through internal/e2ekit) and real
// PostgreSQL: `nearline serve` from a streaming replica of the archive
// (replica_test.go), and a backfill split between `nearline index`
// processes on their own cursors (split_test.go). Tests that need a
// PostgreSQL cluster of their own (a primary and its replica) make one with
// the server binaries of the machine's PostgreSQL installation
// (cluster_test.go, over internal/pgcluster). As all of e2e/, they run
// behind the build tag e2e (go test -tags e2e ./e2e/scale).
package scale
