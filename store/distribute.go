package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nearline/nearline/internal/logs"
)

// Placements of a table on Citus (docs/database.md,
// "A distributed PostgreSQL").
const (
	// PlacementDistributed: hash-distributed by Column, in the colocation
	// group whose first table is ColocateWith.
	PlacementDistributed = "distributed"
	// PlacementReference: one copy on every node.
	PlacementReference = "reference"
	// PlacementLocal: stays on the coordinator only (goose's bookkeeping).
	PlacementLocal = "local"
)

// Placement places one table of the schema on a Citus cluster.
type Placement struct {
	Table     string
	Placement string
	// Column is a distributed table's distribution column.
	Column string
	// ColocateWith is the first table of a distributed table's colocation
	// group (the table itself when it starts the group).
	ColocateWith string
}

// DistributionPlan places every table the migrations create, in the order
// Distribute applies it (each group's first table before the others).
// Block-keyed tables are distributed by their height-range partition key
// in one group, so a block's rows (and an outcome's or a token event's
// with its transaction's) meet on one shard; the state history and
// activity by account number in another, so one account's state at any
// height is on one shard; account bases by name and contract code by its
// hash, each a group of its own; accounts (number <-> name) and the small
// tables a copy on every node.
func DistributionPlan() []Placement {
	block := func(table, column string) Placement {
		return Placement{table, PlacementDistributed, column, "blocks"}
	}
	account := func(table string) Placement {
		return Placement{table, PlacementDistributed, "account", "account_history_ids"}
	}
	ref := func(table string) Placement { return Placement{Table: table, Placement: PlacementReference} }
	return []Placement{
		block("blocks", "height"),
		block("skipped_heights", "height"),
		block("block_chunks", "block_height"),
		block("chunks", "block_height"),
		block("transactions_ids", "block_height"),
		block("receipts_ids", "block_height"),
		block("execution_outcomes_ids", "tx_block_height"),
		block("transaction_statuses", "block_height"),
		block("block_changes", "block_height"),
		block("block_tx_statuses", "block_height"),
		block("ft_events_ids", "tx_block_height"),
		block("nft_events_ids", "tx_block_height"),
		block("mt_events_ids", "tx_block_height"),
		account("account_history_ids"),
		account("access_key_history_ids"),
		account("contract_data_history_ids"),
		account("contract_code_history_ids"),
		account("account_activity_ids"),
		// By name, a group of its own: a row per account, read by name.
		{"account_bases", PlacementDistributed, "account_id", "account_bases"},
		{"contract_codes", PlacementDistributed, "code_hash", "contract_codes"},
		ref("accounts"),
		ref("global_contract_distributions"),
		ref("chain_config"),
		ref("protocol_configs"),
		ref("epoch_protocol_versions"),
		ref("history_start"),
		ref("height_partitioning"),
		ref("indexer_cursor"),
		{Table: "goose_db_version", Placement: PlacementLocal},
	}
}

// RowQuerier is a connection or a pool.
type RowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ErrNotCitus is returned by Distribute for a database that is not a
// Citus coordinator ready to hold shards.
var ErrNotCitus = errors.New("not a Citus coordinator")

// DistributeResult says what Distribute did.
type DistributeResult struct {
	// Distributed are the tables placed by this call; Already those that
	// were placed as planned before it.
	Distributed, Already []string
	// Missing are planned tables the schema does not have (an archive
	// migrated to an earlier version): placed by a later call.
	Missing []string
}

// Distribute places the archive's tables on the Citus cluster whose
// coordinator pool is connected to, as DistributionPlan says: rows already
// stored move to the workers and the coordinator's local copies are
// emptied. It is idempotent (a table placed as planned is left alone, so
// a call after a migration that added a table places only it) and refuses
// a table placed otherwise. It takes the migrations' lock, so a migration
// or another Distribute waits. Stop the indexers first: a table's writes
// wait while it is distributed.
func Distribute(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) (DistributeResult, error) {
	logger = logs.OrDiscard(logger)
	var res DistributeResult
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return res, fmt.Errorf("distribute: %w", err)
	}
	defer conn.Release()
	if err := CheckCitus(ctx, conn.Conn()); err != nil {
		return res, err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLockID)); err != nil {
		return res, fmt.Errorf("distribute: take the migrations' lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLockID))

	placed, err := citusPlacements(ctx, conn.Conn())
	if err != nil {
		return res, err
	}
	for _, p := range DistributionPlan() {
		if p.Placement == PlacementLocal {
			continue
		}
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, p.Table).Scan(&exists); err != nil {
			return res, fmt.Errorf("distribute: look up %s: %w", p.Table, err)
		}
		if !exists {
			res.Missing = append(res.Missing, p.Table)
			continue
		}
		if now, ok := placed[p.Table]; ok {
			if err := now.matches(p, placed); err != nil {
				return res, err
			}
			res.Already = append(res.Already, p.Table)
			continue
		}
		if err := distributeTable(ctx, conn.Conn(), p); err != nil {
			return res, err
		}
		logger.Info("table distributed", "table", p.Table, "placement", p.Placement, "column", p.Column)
		res.Distributed = append(res.Distributed, p.Table)
		if placed, err = citusPlacements(ctx, conn.Conn()); err != nil {
			return res, err
		}
	}
	return res, nil
}

// CheckCitus returns an error wrapping ErrNotCitus, saying what is
// missing, unless conn is connected to the coordinator of a Citus cluster
// with a worker to hold shards.
func CheckCitus(ctx context.Context, conn RowQuerier) error {
	var installed, available bool
	err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus'),
		EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'citus')`).Scan(&installed, &available)
	if err != nil {
		return fmt.Errorf("distribute: look for the citus extension: %w", err)
	}
	switch {
	case !available:
		return fmt.Errorf("%w: the server has no Citus (install it on every node and add citus to shared_preload_libraries; docs/scaling.md)", ErrNotCitus)
	case !installed:
		return fmt.Errorf("%w: the database has no citus extension (CREATE EXTENSION citus in this database on every node, then add the workers with citus_add_node on the coordinator; docs/scaling.md)", ErrNotCitus)
	}
	var coordinator bool
	if err := conn.QueryRow(ctx, `SELECT citus_is_coordinator()`).Scan(&coordinator); err != nil {
		return fmt.Errorf("distribute: ask whether this is the coordinator: %w", err)
	}
	var nodes int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_dist_node
		WHERE isactive AND noderole = 'primary' AND shouldhaveshards AND groupid <> 0`).Scan(&nodes)
	if err != nil {
		return fmt.Errorf("distribute: list the workers: %w", err)
	}
	switch {
	case !coordinator && nodes > 0:
		return fmt.Errorf("%w: this is a worker of a Citus cluster; run it on the coordinator", ErrNotCitus)
	case nodes == 0:
		return fmt.Errorf("%w: the cluster has no worker to hold shards (add them on the coordinator with SELECT citus_add_node('HOST', PORT); docs/scaling.md)", ErrNotCitus)
	}
	return nil
}

// citusTable is how Citus holds a table now.
type citusTable struct {
	kind       string // citus_tables.citus_table_type: distributed, reference, local
	column     string
	colocation int64
	name       string
}

// matches reports (as an error) whether t is placed as p says, its group
// read from placed.
func (t citusTable) matches(p Placement, placed map[string]citusTable) error {
	wrong := func(what string) error {
		return fmt.Errorf("distribute: %s is %s; the plan has it %s (docs/database.md, \"A distributed PostgreSQL\"): undistribute it with undistribute_table and run again",
			t.name, what, p.describe())
	}
	switch {
	case t.kind != p.Placement:
		return wrong("a " + t.kind + " table")
	case p.Placement == PlacementDistributed && t.column != p.Column:
		return wrong("distributed by " + t.column)
	case p.Placement == PlacementDistributed && p.ColocateWith != p.Table && placed[p.ColocateWith].colocation != t.colocation:
		return wrong("in another colocation group than " + p.ColocateWith)
	}
	return nil
}

func (p Placement) describe() string {
	if p.Placement == PlacementDistributed {
		return fmt.Sprintf("distributed by %s with %s", p.Column, p.ColocateWith)
	}
	return p.Placement
}

// citusPlacements reads how Citus holds the tables it knows.
func citusPlacements(ctx context.Context, conn *pgx.Conn) (map[string]citusTable, error) {
	rows, err := conn.Query(ctx, `SELECT table_name::text, citus_table_type, coalesce(distribution_column, ''), colocation_id
		FROM citus_tables`)
	if err != nil {
		return nil, fmt.Errorf("distribute: read citus_tables: %w", err)
	}
	out := map[string]citusTable{}
	for rows.Next() {
		var (
			name string
			t    citusTable
		)
		if err := rows.Scan(&name, &t.kind, &t.column, &t.colocation); err != nil {
			return nil, fmt.Errorf("distribute: read citus_tables: %w", err)
		}
		if t.column == "<none>" {
			t.column = ""
		}
		t.name = name
		out[name] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("distribute: read citus_tables: %w", err)
	}
	return out, nil
}

// distributeTable places one table and empties the coordinator's local
// copy of the rows it held, which Citus copied to the shards and leaves.
func distributeTable(ctx context.Context, conn *pgx.Conn, p Placement) error {
	var hadRows bool
	if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s)`, pgx.Identifier{p.Table}.Sanitize())).Scan(&hadRows); err != nil {
		return fmt.Errorf("distribute %s: %w", p.Table, err)
	}
	var err error
	switch {
	case p.Placement == PlacementReference:
		_, err = conn.Exec(ctx, `SELECT create_reference_table($1)`, p.Table)
	case p.ColocateWith == p.Table:
		_, err = conn.Exec(ctx, `SELECT create_distributed_table($1, $2, colocate_with => 'none')`, p.Table, p.Column)
	default:
		_, err = conn.Exec(ctx, `SELECT create_distributed_table($1, $2, colocate_with => $3)`, p.Table, p.Column, p.ColocateWith)
	}
	if err != nil {
		return fmt.Errorf("distribute %s: %w", p.Table, err)
	}
	if hadRows {
		if _, err := conn.Exec(ctx, `SELECT truncate_local_data_after_distributing_table($1)`, p.Table); err != nil {
			return fmt.Errorf("distribute %s: empty the coordinator's local copy: %w", p.Table, err)
		}
	}
	return nil
}
