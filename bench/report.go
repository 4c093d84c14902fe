package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

type report struct {
	machine  string
	backfill []indexRun
	copies   []copyRun
	latency  []indexRun
	// docLatency are the distant backfills through neardata documents.
	docLatency []indexRun
	// workers is the indexer's Workers: blocks fetched at once.
	workers int
	// concurrency is the indexer's limit of requests in flight to the
	// upstream during the distant backfill.
	concurrency int
	storage     *storageReport
	serve       []serveRow
	single      *serveRow
	events      *eventsReport
	replica     *replicaReport
	// split are the split backfills, one and two indexers alternating.
	split []splitRun
	// real are the real phase's chains.
	real []*realReport
}

// medianBy returns the run with the median value of key.
func medianBy[T any](runs []T, key func(T) float64) T {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b T) int {
		switch ka, kb := key(a), key(b); {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/(1<<10)) }

func (r *report) print(w io.Writer, o options) {
	fmt.Fprintf(w, "\nMachine: %s.\n", r.machine)
	for _, x := range r.real {
		x.print(w)
	}
	if !slices.ContainsFunc(simPhases, o.want) {
		return
	}
	fmt.Fprintf(w, "\nSimulated chain: %d heights, %d shards, %d txs/block (mean), deploy rate %g, seed %d. Medians of %d runs (backfill: %d, its COPY baseline: %d).\n\n",
		o.blocks, o.shards, o.txsPerBlock, o.deployRate, o.seed, o.runs, o.backfillRuns, o.backfillRuns)
	fmt.Fprintln(w, "| benchmark | Nearline | baseline | ratio | goal |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	if len(r.backfill) > 0 && len(r.copies) > 0 {
		ix := medianBy(r.backfill, func(x indexRun) float64 { return float64(x.rows) / x.seconds })
		cp := medianBy(r.copies, func(x copyRun) float64 { return float64(x.rows) / x.seconds })
		ixRows, cpRows := float64(ix.rows)/ix.seconds, float64(cp.rows)/cp.seconds
		fmt.Fprintf(w, "| backfill, %d blocks (%d rows, %s written) | %.1f blocks/s, %.0f rows/s, %s/s | plain COPY of the same rows: %.0f rows/s (%s/s) | %.0f%% | ≥ 70%% |\n",
			ix.blocks, ix.rows, mib(float64(ix.dbBytes)), float64(ix.blocks)/ix.seconds, ixRows, mib(float64(ix.dbBytes)/ix.seconds),
			cpRows, mib(float64(cp.bytes)/cp.seconds), 100*ixRows/cpRows)
		// Where the machine's CPU went, per block, and what the indexer and
		// PostgreSQL alone would reach on its cores with a free upstream.
		per := func(sec float64) float64 { return 1000 * sec / float64(ix.blocks) }
		own := per(ix.cpu.self) + per(ix.cpu.postgres)
		if own > 0 {
			cores := ix.cpu.total / ix.seconds
			fmt.Fprintf(w, "| backfill CPU per block (machine %.0f%% busy) | indexer %.1f ms, PostgreSQL %.1f ms | simulator (the upstream) %.1f ms, other %.1f ms | without the upstream's share: %.0f blocks/s on %.0f cores | ≥ 80 blocks/s |\n",
				100*ix.cpu.busy/ix.cpu.total, per(ix.cpu.self), per(ix.cpu.postgres), per(ix.cpu.sim),
				per(ix.cpu.busy-ix.cpu.self-ix.cpu.postgres-ix.cpu.sim), 1000*cores/own, cores)
		}
	}
	if len(r.latency) > 0 {
		l := medianBy(r.latency, func(x indexRun) float64 { return float64(x.blocks) / x.seconds })
		perBlock := float64(l.requests) / float64(l.blocks)
		c := r.concurrency
		if c == 0 {
			c = int(l.maxInFlight)
		}
		bound := float64(c) / (perBlock * o.latency.Seconds())
		got := float64(l.blocks) / l.seconds
		fmt.Fprintf(w, "| backfill from a distant upstream (%s latency), %d blocks | %.2f blocks/s (%.0f requests/s, at most %d in flight) | bound %d in flight / (%.1f requests/block × %s) = %.2f blocks/s | %.0f%% | ≥ 80%% |\n",
			o.latency, l.blocks, got, float64(l.requests)/l.seconds, l.maxInFlight, c, perBlock, o.latency, bound, 100*got/bound)
	}
	if len(r.docLatency) > 0 {
		d := medianBy(r.docLatency, func(x indexRun) float64 { return float64(x.blocks) / x.seconds })
		perBlock := float64(d.requests) / float64(d.blocks)
		got := float64(d.blocks) / d.seconds
		// A block is one request: the bound is the blocks fetched at once.
		bound := float64(r.workers) / (perBlock * o.latency.Seconds())
		fmt.Fprintf(w, "| backfill from a distant upstream (%s latency), %d blocks, `--source neardata` | %.2f blocks/s (%.1f s of %.1f s writing), %.3f requests/block, %.3f per height (configs aside) | bound %d workers / (%.3f requests/block × %s) = %.1f blocks/s | %.0f%% | ≥ 80%%, ≤ 1.05 requests/block |\n",
			o.latency, d.blocks, got, d.commitSeconds, d.seconds, perBlock, float64(d.requests)/float64(d.heights), r.workers, perBlock, o.latency, bound, 100*got/bound)
		// What the run's requests were: one document per height, the
		// head's, and documents past the range read for its last
		// transactions (a longer run indexes those as its own blocks).
		inRange := d.requests - d.heads - d.beyond
		fmt.Fprintf(w, "| its requests | %d: %d documents for %d heights (%d blocks, %d skipped), %d final heads, %d documents above the range | within the range: %.3f per block, %.3f per height | – | ≤ 1.05 per block |\n",
			d.requests, inRange, d.heights, d.blocks, int64(d.heights)-d.blocks, d.heads, d.beyond,
			float64(inRange)/float64(d.blocks), float64(inRange)/float64(d.heights))
		per := func(sec float64) float64 { return 1000 * sec / float64(d.blocks) }
		if own := per(d.cpu.self) + per(d.cpu.postgres); own > 0 {
			cores := d.cpu.total / d.seconds
			cpuBound := 1000 * cores / own
			fmt.Fprintf(w, "| its CPU per block (machine %.0f%% busy) | indexer %.1f ms, PostgreSQL %.1f ms | CPU bound: %.0f blocks/s on %.0f cores | %.0f%% | – |\n",
				100*d.cpu.busy/d.cpu.total, per(d.cpu.self), per(d.cpu.postgres), cpuBound, cores, 100*got/cpuBound)
		}
		if len(r.latency) > 0 {
			l := medianBy(r.latency, func(x indexRun) float64 { return float64(x.blocks) / x.seconds })
			rpc := float64(l.blocks) / l.seconds
			fmt.Fprintf(w, "| the same, neardata against the RPC source | %.2f blocks/s | `--source rpc`: %.2f blocks/s (%.1f requests/block) | %.1f× | ≥ 5× |\n",
				got, rpc, float64(l.requests)/float64(l.blocks), got/rpc)
		}
	}
	r.printSplit(w, o)
	for _, s := range r.serve {
		fmt.Fprintf(w, "| serve `%s`, %d clients | %.0f req/s, p50 %s, p99 %s | bare handler %.0f req/s (p50 %s, p99 %s); simulator %.0f req/s (p50 %s, p99 %s) | %.0f%% of bare | ≥ 50%% |\n",
			s.method, s.clients, s.serve.rps, ms(s.serve.p50), ms(s.serve.p99), s.bare.rps, ms(s.bare.p50), ms(s.bare.p99),
			s.sim.rps, ms(s.sim.p50), ms(s.sim.p99), 100*s.serve.rps/s.bare.rps)
	}
	if s := r.single; s != nil {
		fmt.Fprintf(w, "| warm `ft_balance_of` call_function, 1 client | %.0f calls/s, p50 %s, p99 %s | simulator %.0f calls/s, p50 %s, p99 %s | %.0f%% | p50 < 2 ms |\n",
			s.serve.rps, ms(s.serve.p50), ms(s.serve.p99), s.sim.rps, ms(s.sim.p50), ms(s.sim.p99), 100*s.serve.rps/s.sim.rps)
	}
	r.printEvents(w)
	r.printReplica(w)
	if s := r.storage; s != nil {
		per := float64(s.dbBytes) / float64(s.blocks)
		fmt.Fprintf(w, "| storage per block (tables + indexes + TOAST) | %s | the answers served about the block, each gzip'd: %s | %.0f%% | ≤ 50%% |\n",
			kib(per), kib(s.servedGzip), 100*per/s.servedGzip)
		fmt.Fprintf(w, "| verbatim JSON of a block in one zstd frame (block, chunks, changes, statuses; no typed column, no index) | %s | the answers served, each gzip'd: %s | %.0f%% | |\n",
			kib(s.floorZstd), kib(s.servedGzip), 100*s.floorZstd/s.servedGzip)
		fmt.Fprintf(w, "| storage per block, against what the indexer fetched | %s | JSON-RPC responses %s raw, %s gzip'd | %.0f%% of gzip'd | |\n",
			kib(per), kib(s.jsonRaw), kib(s.jsonGzip), 100*per/s.jsonGzip)
		var parts []string
		for _, t := range s.tables {
			if perBlock := float64(t.table+t.indexes) / float64(s.blocks); perBlock >= 512 {
				parts = append(parts, fmt.Sprintf("%s %s+%s", t.name, kib(float64(t.table)/float64(s.blocks)),
					kib(float64(t.indexes)/float64(s.blocks))))
			}
		}
		fmt.Fprintf(w, "\nPer block, by table (table with TOAST + indexes; tables under 0.5 KiB per block left out): %s.\n", strings.Join(parts, ", "))
	}
}
