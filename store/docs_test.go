package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/docs"
	"github.com/nearline/nearline/store/storetest"
)

// docsFile holds the SQL a reader is shown that these tests run.
const docsFile = "docs/database.md"

// exampleQueries returns the SQL blocks of docs/database.md's "Example
// queries".
func exampleQueries(t *testing.T) []string { return docs.SQL(t, docsFile, "## Example queries") }

// TestExampleQueriesRunOnTheSchema: every example query docs/database.md
// gives analysts runs on an archive of the current schema, holding blocks
// over several partitions.
func TestExampleQueriesRunOnTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 2*storetest.PartitionSize + 10})
	queries := exampleQueries(t)
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

// TestExplorerQueriesAnswer: docs/database.md's explorer queries run on an
// archive whose blocks carry token events (ft.near sends bob 5 tokens a
// block; nft.near mints bob a token a block and moves the previous one to
// carol), each returns rows, and the balance and holders they give are
// right.
func TestExplorerQueriesAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	end := uint64(2*storetest.PartitionSize + 10)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: end})
	var batch []bundle.Bundle
	for h := uint64(1); h <= end; h++ {
		b, ok := c.Bundle(h)
		require.True(t, ok)
		nft := []string{fmt.Sprintf(`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_mint","data":[{"owner_id":"bob.near","token_ids":["t%03d"]}]}`, h)}
		if h > 1 {
			nft = append(nft, fmt.Sprintf(`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_transfer","data":[{"old_owner_id":"bob.near","new_owner_id":"carol.near","token_ids":["t%03d"]}]}`, h-1))
		}
		addOutcomes(t, &b, h,
			outcomeSpec{executor: "ft.near", logs: []string{`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_transfer","data":[{"old_owner_id":"alice.near","new_owner_id":"bob.near","amount":"5"}]}`}},
			outcomeSpec{executor: "nft.near", logs: nft})
		batch = append(batch, b)
	}
	_, err := s.Commit(ctx, batch[:end/2])
	require.NoError(t, err)
	_, err = s.Commit(ctx, batch[end/2:])
	require.NoError(t, err)

	queries := docs.SQL(t, docsFile, "## Explorer queries")
	require.Len(t, queries, 5)
	results := make([][][]any, len(queries))
	for i, q := range queries {
		rows, err := s.Pool().Query(ctx, q)
		require.NoError(t, err, q)
		for rows.Next() {
			v, err := rows.Values()
			require.NoError(t, err)
			results[i] = append(results[i], v)
		}
		require.NoError(t, rows.Err(), q)
		require.NotEmpty(t, results[i], q)
	}
	// Balance history: bob's newest balance is 5 per block.
	balance := results[2][0][4].(pgtype.Numeric)
	require.Equal(t, int64(5*end), balance.Int.Int64()*pow10(balance.Exp))
	// Holders: every token but the last went to carol.
	require.Len(t, results[3], 50)
	require.Equal(t, []any{"carol.near", int64(end - 1)}, results[4][0])
	require.Equal(t, []any{"bob.near", int64(1)}, results[4][1])
}

func pow10(exp int32) int64 {
	out := int64(1)
	for range exp {
		out *= 10
	}
	return out
}
