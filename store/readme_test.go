package store_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store/storetest"
)

// readmeQueries returns the SQL blocks of the README's "Example queries".
func readmeQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	text := string(b)
	start := strings.Index(text, "### Example queries")
	require.GreaterOrEqual(t, start, 0, "README has its example queries")
	text = text[start:]
	if end := strings.Index(text[1:], "\n### "); end >= 0 {
		text = text[:end+1]
	}
	var out []string
	for {
		i := strings.Index(text, "```sql\n")
		if i < 0 {
			return out
		}
		text = text[i+len("```sql\n"):]
		j := strings.Index(text, "```")
		require.GreaterOrEqual(t, j, 0, "unterminated sql block")
		out = append(out, text[:j])
		text = text[j+3:]
	}
}

// TestReadmeExampleQueriesRunOnTheSchema: every example query the README
// gives analysts runs on an archive of the current schema, holding blocks
// over several partitions.
func TestReadmeExampleQueriesRunOnTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 2*storetest.PartitionSize + 10})
	commitRange(t, s, c, 1, 2*storetest.PartitionSize+10, 0)
	queries := readmeQueries(t)
	require.GreaterOrEqual(t, len(queries), 8)
	for _, q := range queries {
		err := pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, q)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		})
		require.NoError(t, err, q)
	}
}
