// Package migrations holds Nearline's PostgreSQL schema as goose v3 SQL
// migrations, embedded in the binary. Never edit an applied migration: add
// a new one.
package migrations

import "embed"

// FS holds the *.sql migrations.
//
//go:embed *.sql
var FS embed.FS
