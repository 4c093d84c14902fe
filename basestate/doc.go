// Package basestate loads the state an archive starts from, known without a
// block: a nearcore genesis file's records (LoadGenesis) or, for an archive
// that starts later, a snapshot of named accounts read from an upstream node
// (Snapshot). Either way the state is stored as the base of its history and
// the height is recorded as the start of history.
package basestate
