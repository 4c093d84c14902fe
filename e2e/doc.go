// Package e2e holds end-to-end tests that run the real nearline binary:
// `nearline sim` as the upstream, `nearline index` into a fresh PostgreSQL
// database, and `nearline serve`, then compare what serve answers with what
// the simulator answered for the same requests (a seeded sample: the
// in-process tests of archive/ ask every request at every height).
//
// They are the second tier of tests, behind the build tag e2e:
//
//	go test -tags e2e ./e2e/...
package e2e
