//go:build e2e

package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/internal/docs"
	"github.com/nearline/nearline/internal/e2ekit"
)

// TestExampleQueriesReturnRowsOnTheDemo runs docs/database.md's example
// queries on the demo, `nearline run --sim` stopped after a few dozen
// heights: every query runs, and those about the archive's last days,
// the demo's accounts and its sample hash return rows.
func TestExampleQueriesReturnRowsOnTheDemo(t *testing.T) {
	for _, v := range []string{"NEARLINE_UPSTREAM", "NEARLINE_GENESIS", "NEARLINE_SOURCE"} {
		t.Setenv(v, "")
	}
	dbURL := e2ekit.FreshDatabase(t)
	p := binary.Start(t, "run", "--sim", "--database-url", dbURL, "--listen", e2ekit.AnyPort)
	e2ekit.WaitCursor(t, dbURL, 30, 2*time.Minute)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal run: %v", err)
	}
	if err, ok := p.WaitExit(time.Minute); !ok || err != nil {
		t.Fatalf("nearline run --sim after SIGTERM: exited %v (in time: %v), want 0", err, ok)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The queries whose answer on the demo must not be empty.
	mustAnswer := []string{"max(block_time)", "min(block_time)", "'alice.near'", "'GZUF9DxBh5m7SAWq1uvdET6LMXgiMHkB1gwuowhEa1Bq'",
		"'ft.near'", "date_trunc('day', b.block_time)"}
	queries := docs.SQL(t, "docs/database.md", "## Example queries")
	var checked int
	for _, q := range queries {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		var n int
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		for _, m := range mustAnswer {
			if strings.Contains(q, m) {
				checked++
				if n == 0 {
					t.Errorf("no rows on the demo:\n%s", q)
				}
				break
			}
		}
	}
	if checked < 6 {
		t.Fatalf("only %d of the %d example queries are about the demo's data", checked, len(queries))
	}
	t.Logf("%d example queries ran, %d of them returned rows as they must", len(queries), checked)
}
