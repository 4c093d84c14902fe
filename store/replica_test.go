package store_test

import (
	"context"
	"crypto/rand"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/docs"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestReplicaLagOnAPrimary: the test server is a primary, so ReplicaLag
// says it is not a replica, with no lag. (A real standby is read in the
// end-to-end test of e2e/scale.)
func TestReplicaLagOnAPrimary(t *testing.T) {
	t.Parallel()
	s := storetest.NewStore(t)
	lag, replica, err := s.ReplicaLag(context.Background())
	require.NoError(t, err)
	require.False(t, replica)
	require.Zero(t, lag)
}

// TestReadOnlyRoleReadsEveryPartition: docs/database.md's read-only role
// (its SQL run as given, role and database renamed for the test), granted
// before any block is written, reads through the store every block of an
// archive whose partitions the writes created afterwards, reads such a
// partition directly (the default privileges), may not write, and reads
// the replica lag too.
func TestReadOnlyRoleReadsEveryPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := storetest.NewDatabaseURL(t)
	role := "nearline_test_reader_" + strings.ToLower(rand.Text()[:12])
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close(context.Background()) })
	// The role is the server's, not the database's: dropped after the
	// database (cleanups run last first), with what it was granted.
	storetest.ExecAtCleanup(t, base, `DROP ROLE IF EXISTS `+role)
	u, err := url.Parse(base)
	require.NoError(t, err)
	dbName := strings.TrimPrefix(u.Path, "/")

	blocks := docs.SQL(t, docsFile, "## The read-only role")
	require.Len(t, blocks, 1, "one SQL block: the read-only role")
	grant := strings.ReplaceAll(blocks[0], "nearline_reader", role)
	grant = strings.ReplaceAll(grant, "DATABASE nearline ", "DATABASE "+dbName+" ")
	require.Contains(t, grant, "DATABASE "+dbName+" ")
	_, err = admin.Exec(ctx, grant)
	require.NoError(t, err)

	s, err := store.Open(ctx, base, store.Config{MaxConns: 2}, nil)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	const p = storetest.PartitionSize
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 3*p + 5})
	commitRange(t, s, c, 1, 3*p+5, 0)

	u.User = url.UserPassword(role, "change me")
	reader, err := store.Open(ctx, u.String(), store.Config{MaxConns: 2}, nil)
	require.NoError(t, err)
	t.Cleanup(reader.Close)
	latest, _, err := reader.LatestBlock(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(3*p+5), latest)
	for _, h := range c.Heights() {
		want, err := s.BlockView(ctx, near.HeightID(h))
		require.NoError(t, err)
		got, err := reader.BlockView(ctx, near.HeightID(h))
		require.NoError(t, err, "height %d", h)
		require.JSONEq(t, string(want), string(got), "height %d", h)
		wantAcc, err := s.AccountAt(ctx, "alice.near", h)
		require.NoError(t, err)
		gotAcc, err := reader.AccountAt(ctx, "alice.near", h)
		require.NoError(t, err)
		require.Equal(t, wantAcc, gotAcc)
	}
	_, replica, err := reader.ReplicaLag(ctx)
	require.NoError(t, err)
	require.False(t, replica)

	var n int
	part := store.PartitionName("blocks", 2*p, p)
	require.NoError(t, reader.Pool().QueryRow(ctx, `SELECT count(*) FROM `+part).Scan(&n))
	require.Positive(t, n, "partition %s read directly", part)
	_, err = reader.Pool().Exec(ctx, `DELETE FROM blocks`)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "42501", pgErr.Code, "insufficient_privilege: %v", err)
}
