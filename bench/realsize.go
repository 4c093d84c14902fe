package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/zstd"
)

// relSize is a table's bytes on disk, its partitions summed: the main fork
// (heap), TOAST with the free-space and visibility maps (the rest of
// pg_table_size), and its indexes (pg_indexes_size, TOAST's index
// included in toast); rows counted exactly.
type relSize struct {
	name             string
	heap, toast, ixs int64
	rows             int64
}

func (r relSize) total() int64 { return r.heap + r.toast + r.ixs }

// relationSizes measures every table of the database conn is connected to
// (goose's own left out), a partitioned table once with its partitions.
func relationSizes(ctx context.Context, conn *pgx.Conn) (map[string]relSize, error) {
	rows, err := conn.Query(ctx, `SELECT c.relname,
		       coalesce(sum(pg_relation_size(p.relid)), 0)::bigint,
		       coalesce(sum(pg_table_size(p.relid) - pg_relation_size(p.relid)), 0)::bigint,
		       coalesce(sum(pg_indexes_size(p.relid)), 0)::bigint
		FROM pg_class c, LATERAL (SELECT t.relid FROM pg_partition_tree(c.oid) t WHERE c.relkind = 'p' AND t.isleaf
		                          UNION ALL SELECT c.oid WHERE c.relkind = 'r') p
		WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
		  AND NOT c.relispartition AND c.relname NOT LIKE 'goose%'
		GROUP BY c.relname`)
	if err != nil {
		return nil, fmt.Errorf("measure tables: %w", err)
	}
	sizes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (relSize, error) {
		var s relSize
		err := r.Scan(&s.name, &s.heap, &s.toast, &s.ixs)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("measure tables: %w", err)
	}
	out := make(map[string]relSize, len(sizes))
	for _, s := range sizes {
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{s.name}.Sanitize()).Scan(&s.rows); err != nil {
			return nil, fmt.Errorf("count %s: %w", s.name, err)
		}
		out[s.name] = s
	}
	return out, nil
}

// grownSizes is after less before, per table, largest first.
func grownSizes(before, after map[string]relSize) []relSize {
	var out []relSize
	for name, a := range after {
		b := before[name]
		out = append(out, relSize{name: name, heap: a.heap - b.heap, toast: a.toast - b.toast,
			ixs: a.ixs - b.ixs, rows: a.rows - b.rows})
	}
	slices.SortFunc(out, func(x, y relSize) int {
		return cmp.Or(cmp.Compare(y.total(), x.total()), strings.Compare(x.name, y.name))
	})
	return out
}

// docSizes is the mean raw, gzip'd (default level, as HTTP serves it) and
// zstd'd (level 3, zstd's default) size of docs.
type docSizes struct {
	raw, gzip, zstd float64
	sampled         int
}

func measureDocs(docs [][]byte) (docSizes, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return docSizes{}, err
	}
	defer enc.Close()
	var s docSizes
	var buf bytes.Buffer
	for _, d := range docs {
		buf.Reset()
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(d); err != nil {
			return docSizes{}, err
		}
		if err := zw.Close(); err != nil {
			return docSizes{}, err
		}
		s.raw += float64(len(d))
		s.gzip += float64(buf.Len())
		s.zstd += float64(len(enc.EncodeAll(d, nil)))
		s.sampled++
	}
	n := float64(max(s.sampled, 1))
	s.raw, s.gzip, s.zstd = s.raw/n, s.gzip/n, s.zstd/n
	return s, nil
}
