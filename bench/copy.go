package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/store"
)

// tableDump is one table's rows in COPY's binary format, in a file (a
// 10,000-block archive does not fit in memory next to the simulator).
type tableDump struct {
	name  string
	rows  int64
	path  string
	bytes int64
}

// copyRun is one COPY FROM of every dumped table into a fresh database.
type copyRun struct {
	seconds     float64
	rows, bytes int64
}

// userTables lists the archive's tables (goose's own excluded), a
// partitioned table once, not its partitions.
func userTables(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace
		AND relkind IN ('r', 'p') AND NOT relispartition AND relname NOT LIKE 'goose%' ORDER BY relname`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// dumpTables copies every table of the database at dbURL out (COPY TO) into
// files under dir.
func dumpTables(ctx context.Context, dbURL, dir string) ([]tableDump, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	names, err := userTables(ctx, conn)
	if err != nil {
		return nil, err
	}
	var out []tableDump
	for _, name := range names {
		path := filepath.Join(dir, name+".copy")
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("create dump: %w", err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		// A partitioned table is copied out through a query (COPY TO
		// reads plain tables only); COPY FROM routes rows to partitions.
		tag, err := conn.PgConn().CopyTo(ctx, w, "COPY (SELECT * FROM "+name+") TO STDOUT (FORMAT binary)")
		if err == nil {
			err = w.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("copy %s out: %w", name, err)
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("stat dump: %w", err)
		}
		out = append(out, tableDump{name: name, rows: tag.RowsAffected(), path: path, bytes: st.Size()})
	}
	return out, nil
}

// loadTables copies the dump into the (migrated, empty) database at dbURL in
// one transaction: the write limit of this server for these rows, tables
// and indexes. The partitions of heights 0 to maxHeight are created first,
// as the indexer creates them ahead of its writes.
func loadTables(ctx context.Context, dbURL string, dump []tableDump, maxHeight uint64) (copyRun, error) {
	st, err := store.Open(ctx, dbURL, store.Config{}, nil)
	if err != nil {
		return copyRun{}, err
	}
	err = st.EnsurePartitions(ctx, 0, maxHeight)
	st.Close()
	if err != nil {
		return copyRun{}, err
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return copyRun{}, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	for _, t := range dump { // migrations may seed rows; the dump has them all
		if _, err := conn.Exec(ctx, "TRUNCATE "+t.name); err != nil {
			return copyRun{}, fmt.Errorf("truncate %s: %w", t.name, err)
		}
	}
	var r copyRun
	began := time.Now()
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, t := range dump {
			f, err := os.Open(t.path)
			if err != nil {
				return fmt.Errorf("open dump: %w", err)
			}
			tag, err := conn.PgConn().CopyFrom(ctx, bufio.NewReaderSize(f, 1<<20), "COPY "+t.name+" FROM STDIN (FORMAT binary)")
			f.Close()
			if err != nil {
				return fmt.Errorf("copy %s in: %w", t.name, err)
			}
			r.rows += tag.RowsAffected()
			r.bytes += t.bytes
		}
		return nil
	})
	if err != nil {
		return copyRun{}, err
	}
	r.seconds = since(began)
	return r, nil
}

// databaseBytes is the size of every table with its indexes and TOAST.
func databaseBytes(ctx context.Context, st *store.Store) (int64, error) {
	var n int64
	err := st.Pool().QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename)::regclass)), 0)::bigint
		FROM pg_tables WHERE schemaname = 'public'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("measure database: %w", err)
	}
	return n, nil
}

// tableSizes lists table, index and total bytes per table, largest first.
func tableSizes(ctx context.Context, st *store.Store) ([]tableSize, error) {
	rows, err := st.Pool().Query(ctx, `SELECT relname, tbl, idx FROM (
		SELECT c.relname,
		       CASE WHEN c.relkind = 'p'
		            THEN (SELECT coalesce(sum(pg_table_size(p.relid)), 0) FROM pg_partition_tree(c.oid) p)::bigint
		            ELSE pg_table_size(c.oid) END AS tbl,
		       CASE WHEN c.relkind = 'p'
		            THEN (SELECT coalesce(sum(pg_indexes_size(p.relid)), 0) FROM pg_partition_tree(c.oid) p WHERE p.isleaf)::bigint
		            ELSE pg_indexes_size(c.oid) END AS idx
		FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
		  AND NOT c.relispartition AND c.relname NOT LIKE 'goose%') t
		ORDER BY tbl + idx DESC`)
	if err != nil {
		return nil, fmt.Errorf("measure tables: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (tableSize, error) {
		var t tableSize
		err := r.Scan(&t.name, &t.table, &t.indexes)
		return t, err
	})
}

type tableSize struct {
	name           string
	table, indexes int64
}
