package store_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestDistributeRefusesADatabaseWithoutCitus: on a database without the
// citus extension Distribute says what is missing and places nothing.
func TestDistributeRefusesADatabaseWithoutCitus(t *testing.T) {
	t.Parallel()
	if storetest.Citus() {
		t.Skip("the test databases are Citus databases here: TestDistributeIsIdempotent covers Distribute on them")
	}
	url := storetest.NewDatabaseURL(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	_, err = store.Distribute(ctx, pool, nil)
	require.ErrorIs(t, err, store.ErrNotCitus)
	require.ErrorContains(t, err, "citus")
	require.ErrorIs(t, store.CheckCitus(ctx, pool), store.ErrNotCitus)
}

// TestDistributeIsIdempotent: a distributed archive distributed again is
// left as it is, and every table is placed as the plan says, each group's
// tables in one colocation group.
func TestDistributeIsIdempotent(t *testing.T) {
	t.Parallel()
	storetest.RequireCitus(t)
	url := storetest.NewDatabaseURL(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	res, err := store.Distribute(ctx, pool, nil)
	require.NoError(t, err)
	require.Empty(t, res.Distributed)
	require.Empty(t, res.Missing)

	groups := map[string]int64{}
	for _, p := range store.DistributionPlan() {
		var (
			kind, column string
			colocation   int64
		)
		err := pool.QueryRow(ctx, `SELECT citus_table_type, distribution_column, colocation_id FROM citus_tables
			WHERE table_name = $1::regclass`, p.Table).Scan(&kind, &column, &colocation)
		if p.Placement == store.PlacementLocal {
			require.ErrorIs(t, err, pgx.ErrNoRows, "%s stays local", p.Table)
			continue
		}
		require.NoError(t, err, p.Table)
		require.Contains(t, res.Already, p.Table)
		require.Equal(t, p.Placement, kind, p.Table)
		if p.Placement != store.PlacementDistributed {
			continue
		}
		require.Equal(t, p.Column, column, p.Table)
		if p.ColocateWith == p.Table {
			groups[p.Table] = colocation
		}
		require.Equal(t, groups[p.ColocateWith], colocation, "%s is colocated with %s", p.Table, p.ColocateWith)
	}
	require.Len(t, groups, 4)
}

// TestRowsOfAHeightShareAWorker: on a distributed archive a height's
// block, chunks, transactions, receipts, outcomes, statuses and changes are
// on one node, as the reads that join them need; an account's history,
// base and activity on one node too.
func TestRowsOfAHeightShareAWorker(t *testing.T) {
	t.Parallel()
	storetest.RequireCitus(t)
	s, _ := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 40, Shards: 3})
	ctx := context.Background()
	nodeOf := func(table string, value any) string {
		var node string
		err := s.Pool().QueryRow(ctx, `SELECT nodename || ':' || nodeport FROM citus_shards
			WHERE shardid = get_shard_id_for_distribution_column($1, $2::text)`, table, fmt.Sprint(value)).Scan(&node)
		require.NoError(t, err, "%s %v", table, value)
		return node
	}
	nodes := map[string]bool{}
	for height := int64(1); height <= 40; height++ {
		var rows int
		require.NoError(t, s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM receipts WHERE block_height = $1)
			+ (SELECT count(*) FROM execution_outcomes WHERE tx_block_height = $1)`, height).Scan(&rows))
		require.Positive(t, rows, "height %d has receipts and outcomes to place", height)
		want := nodeOf("blocks", height)
		nodes[want] = true
		for _, p := range store.DistributionPlan() {
			if p.ColocateWith == "blocks" {
				require.Equal(t, want, nodeOf(p.Table, height), "%s at height %d", p.Table, height)
			}
		}
	}
	require.Len(t, nodes, 2, "40 heights spread over both workers")
	for _, name := range []string{storetest.Alice, storetest.Bob, storetest.Contract} {
		var account int32
		require.NoError(t, s.Pool().QueryRow(ctx, `SELECT id FROM accounts WHERE name = $1`, name).Scan(&account))
		want := nodeOf("account_history_ids", account)
		for _, p := range store.DistributionPlan() {
			if p.ColocateWith == "account_history_ids" {
				require.Equal(t, want, nodeOf(p.Table, account), "%s of %s", p.Table, name)
			}
		}
	}
}

// TestPointReadsOnCitus: the RPC's point reads by height or account are
// router queries (one shard); those by hash go to every shard of their
// group once, each probing its own index (docs/scaling.md).
func TestPointReadsOnCitus(t *testing.T) {
	t.Parallel()
	storetest.RequireCitus(t)
	s, c := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 20})
	ctx := context.Background()
	var shards int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT shard_count FROM citus_tables WHERE table_name = 'blocks'::regclass`).Scan(&shards))
	b, _ := c.Bundle(10)
	tx := b.TxStatuses[0]
	receipt := b.Chunks[0].View.Receipts[0].ReceiptID
	var alice int32
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT id FROM accounts WHERE name = $1`, storetest.Alice).Scan(&alice))
	for _, q := range []struct {
		name  string
		sql   string
		args  []any
		tasks int
	}{
		{"block by height", `SELECT view::text FROM blocks WHERE height = $1`, []any{int64(10)}, 1},
		{"view_account", store.AccountAtSQL, []any{alice, int64(10)}, 1},
		{"tx by hash", store.TxStatusSQL, []any{tx.TxHash, tx.SignerID}, shards},
		{"EXPERIMENTAL_receipt", store.ReceiptSQL, []any{receipt}, shards},
		{"EXPERIMENTAL_receipt from its status", store.ReceiptStatusSQL, []any{receipt}, shards},
	} {
		plan := strings.Join(rowList(t, s.Pool(), "EXPLAIN "+q.sql, q.args...), "\n")
		require.Contains(t, plan, "Task Count: "+strconv.Itoa(q.tasks)+"\n", "%s:\n%s", q.name, plan)
		t.Logf("%s: %d task(s)", q.name, q.tasks)
	}
}

// TestDistributedArchiveMigratesForward: an archive distributed at an
// earlier schema version takes migrations 15 to 17 on the cluster (they
// rewrite, add and drop columns, indexes and tables); 18 refuses it,
// naming the statement that undistributes its tables. Once that has run,
// the archive migrates, distributing it places every table, distributing
// it again finds every one placed, and the archive then takes and serves
// blocks.
func TestDistributedArchiveMigratesForward(t *testing.T) {
	t.Parallel()
	storetest.RequireCitus(t)
	ctx := context.Background()
	url := storetest.NewEmptyDatabaseURL(t)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	// Migrations 15 to 17 run on a distributed archive. Migrations 10,
	// 11, 13 and 14 do not (a constraint added beside other subcommands;
	// a stable function over columns in an UPDATE; joins of distributed
	// and local tables), and 18 to 21 refuse one: an archive is
	// distributed at version 21 or later (docs/scaling.md).
	require.NoError(t, store.MigrateTo(ctx, pool, nil, 14))
	res, err := store.Distribute(ctx, pool, nil)
	require.NoError(t, err)
	require.Contains(t, res.Distributed, "blocks")

	err = store.MigratePool(ctx, pool, nil)
	require.ErrorContains(t, err, "migration 00018 does not run on a distributed archive")
	var version int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&version))
	require.EqualValues(t, 17, version)
	undistribute := regexp.MustCompile(`SELECT undistribute_table.*relispartition`).FindString(err.Error())
	require.NotEmpty(t, undistribute, "the refusal names the statement that undistributes the tables")
	_, err = pool.Exec(ctx, undistribute)
	require.NoError(t, err)

	require.NoError(t, store.MigratePool(ctx, pool, nil))
	res, err = store.Distribute(ctx, pool, nil)
	require.NoError(t, err)
	require.Empty(t, res.Missing)
	require.Contains(t, res.Distributed, "blocks")
	res, err = store.Distribute(ctx, pool, nil)
	require.NoError(t, err)
	require.Empty(t, res.Distributed)
	require.Contains(t, res.Already, "blocks")

	s, err := store.Open(ctx, url, store.Config{MaxConns: 4}, nil)
	require.NoError(t, err)
	defer s.Close()
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 10})
	_, err = s.Commit(ctx, c.Batch(1, 10, 0))
	require.NoError(t, err)
	b, _ := c.Bundle(7)
	view, err := s.BlockView(ctx, near.HeightID(7))
	require.NoError(t, err)
	require.JSONEq(t, string(b.BlockJSON), string(view))
}
