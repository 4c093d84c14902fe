package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/nearline/nearline/indexer"
)

// print writes the real phase's tables.
func (r *realReport) print(w io.Writer) {
	n := float64(r.blocks)
	st := r.stats
	fmt.Fprintf(w, "\nReal-document chain: %d linked copies of %s (height %d; per block %d transactions, %d executed receipts; "+
		"%d of the %d receipts a copy creates execute in the next copy (%.1f%%), %d of them from their creator's account; "+
		"%d of %d transactions' receipts all execute, within %d copies), indexed by `nearline index --source neardata` "+
		"from a local upstream (--workers %d, --batch-size %d, --events=%t).\n\n",
		r.blocks, r.doc, r.height, st.Transactions, st.Executed, st.Paired, st.Created, pct(st.Paired, st.Created), st.ByAccount,
		st.Complete, st.Transactions, st.MaxDepth, cmp.Or(r.workers, indexer.DefaultWorkers), cmp.Or(r.batch, indexer.DefaultBatchSize), r.events)
	var disk int64
	for _, t := range r.tables {
		disk += t.total()
	}
	perBlock := float64(disk) / n
	fmt.Fprintln(w, "| measure | per block | note |")
	fmt.Fprintln(w, "| --- | --- | --- |")
	fmt.Fprintf(w, "| block document: raw, gzip (default level), zstd -3 | %s, %s, %s | mean of %d copies |\n",
		kib(r.sizes.raw), kib(r.sizes.gzip), kib(r.sizes.zstd), r.sizes.sampled)
	fmt.Fprintf(w, "| on disk: tables, TOAST and indexes | %s | %.2f× the gzip'd document, %.2f× its zstd, %.0f%% of its raw JSON; %s in all |\n",
		kib(perBlock), perBlock/r.sizes.gzip, perBlock/r.sizes.zstd, 100*perBlock/r.sizes.raw, mib(float64(disk)))
	indexer := r.user + r.sys
	fmt.Fprintf(w, "| CPU, indexer process (user+sys, rusage) | %.1f ms | user %.1f s, sys %.1f s; %.0f minor page faults a block |\n", 1000*indexer/n, r.user, r.sys, float64(r.minflt)/n)
	if r.warmBlocks > 0 {
		fmt.Fprintf(w, "| CPU, indexer process, warm | %.1f ms | from its first third of the blocks to its second, the pipeline full: over %d blocks, its CPU (/proc) and cursor read every 50 ms |\n",
			float64(r.warmCPU)/1e6, r.warmBlocks)
	}
	fmt.Fprintf(w, "| CPU, PostgreSQL (the database's backends, /proc) | %.1f ms | server's checkpointer, writers (all databases): %.1f s |\n", 1000*r.pg/n, r.pgShared)
	cores := r.machine.total / max(r.seconds, 1e-9)
	fmt.Fprintf(w, "| CPU, indexer and PostgreSQL | %.1f ms | CPU bound on %.0f cores: %.0f blocks/s |\n", 1000*(indexer+r.pg)/n, cores, n*cores/(indexer+r.pg))
	bound := n * cores / (indexer + r.pg)
	fmt.Fprintf(w, "| blocks/s | %.1f | %d blocks in %.1f s (the process, start to exit), %.0f%% of the CPU bound, machine %.0f%% busy |\n",
		n/r.seconds, r.blocks, r.seconds, 100*n/r.seconds/bound, 100*r.machine.busy/max(r.machine.total, 1e-9))
	// The upstream the indexer reads is this process, on the same cores:
	// what it spends is not the indexer's, yet no core does it for free.
	withUpstream := n * cores / (indexer + r.pg + r.machine.self)
	fmt.Fprintf(w, "| CPU, this benchmark (the local upstream serving the documents, its watches) | %.1f ms | on the same cores: counted in, the CPU bound is %.0f blocks/s, %.0f%% of it reached |\n",
		1000*r.machine.self/n, withUpstream, 100*n/r.seconds/withUpstream)
	fmt.Fprintf(w, "| indexer max RSS | %s | VmHWM of the process, polled every 20 ms |\n", mib(float64(r.maxRSS)))
	fmt.Fprintf(w, "| documents fetched | %.3f per block | %d documents, %d final heads |\n", float64(r.requests)/n, r.requests, r.heads)
	if len(r.statuses) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.statuses)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.statuses[k]))
		}
		fmt.Fprintf(w, "| transaction statuses stored | | %s |\n", strings.Join(parts, ", "))
	}
	for _, s := range r.serve {
		fmt.Fprintf(w, "| serve `%s`, one connection, sequential | p50 %s | p99 %s, %.0f req/s, %d errors |\n",
			s.method, ms(s.load.p50), ms(s.load.p99), s.load.rps, s.load.errors)
	}
	fmt.Fprintf(w, "\nPer table, KiB per block (partitions summed; TOAST includes its index and the free-space and visibility maps):\n\n")
	fmt.Fprintln(w, "| table | heap | TOAST | indexes | total | rows per block |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	k := func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/1024/n) }
	for _, t := range r.tables {
		if t.total() == 0 && t.rows == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.1f |\n", t.name, k(t.heap), k(t.toast), k(t.ixs), k(t.total()), float64(t.rows)/n)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
