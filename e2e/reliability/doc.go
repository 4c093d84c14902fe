// Package reliability holds the end-to-end tests of docs/guarantees.md
// on the real nearline binary: SIGKILL and SIGTERM of index and
// serve, faulty, forked and vanishing upstreams (an outage under `run`),
// PostgreSQL connections terminated or the server restarted, hostile
// input, and the serving load benchmark.
// They are a package of their own so that e2e and they each stay well
// within go test's default time limit of a package, and, as all of e2e/,
// behind the build tag e2e (go test -tags e2e ./e2e/reliability).
package reliability
