package e2ekit

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/store/storetest"
)

// FreshDatabase returns the URL of a new, empty (unmigrated) database on
// the test server (NEARLINE_TEST_DATABASE_URL), dropped when t ends, so
// the binary's own start-up migration is exercised too.
func FreshDatabase(t testing.TB) string {
	t.Helper()
	return storetest.NewEmptyDatabaseURL(t)
}

// CursorHeight reads the indexer's cursor (0, false before the first
// commit or before the schema exists).
func CursorHeight(ctx context.Context, dbURL string) (uint64, bool) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, false
	}
	defer conn.Close(context.Background())
	var h uint64
	if err := conn.QueryRow(ctx, `SELECT height FROM indexer_cursor WHERE name = 'main'`).Scan(&h); err != nil {
		return 0, false
	}
	return h, true
}

// WaitCursor waits until the cursor reaches at least height.
func WaitCursor(t testing.TB, dbURL string, height uint64, timeout time.Duration) uint64 {
	t.Helper()
	var (
		h  uint64
		ok bool
	)
	if !wait.Until(timeout, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h, ok = CursorHeight(ctx, dbURL)
		return ok && h >= height
	}) {
		t.Fatalf("cursor did not reach %d within %s (at %d, %v)", height, timeout, h, ok)
	}
	return h
}
