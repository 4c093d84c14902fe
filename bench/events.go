package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/upstream"
)

// eventsReport is what the events phase measured.
type eventsReport struct {
	on, off []indexRun // backfills with and without the explorer tables
	rows    map[string]int64
	bytes   map[string]int64 // pg_total_relation_size of the explorer tables
	pages   []pageDepth
	account string
	total   int64 // the account's activity rows
	plan    string
	oneScan bool
}

// pageDepth is the latency of one page of an account's activity after a
// cursor that many rows deep.
type pageDepth struct {
	depth    int64
	p50, p99 time.Duration
}

// lastBlock returns the highest height at or below h where the chain has a
// block: the indexer's --to must not be a skipped height at the chain's
// end (it would wait for the next block to learn it was skipped).
func (e *benchEnv) lastBlock(ctx context.Context, h uint64) (uint64, error) {
	client, err := upstream.NewClient(upstream.Config{Endpoints: []string{e.chain.plainURL}}, e.logger)
	if err != nil {
		return 0, err
	}
	for ; h > 0; h-- {
		_, err := client.CallRaw(ctx, "block", map[string]uint64{"block_id": h})
		if err == nil {
			return h, nil
		}
		if !near.IsUnknownBlock(err) {
			return 0, fmt.Errorf("look up block %d: %w", h, err)
		}
	}
	return 0, fmt.Errorf("no block at or below %d", h)
}

// activityPageSQL is the page an explorer asks for: 50 rows of an
// account's activity, newest first, after the cursor of the last row it
// showed (docs/database.md, "Token events and account activity"): the
// account by its number (migration 00018), the other accounts' names
// looked up for the page's rows only.
const activityPageSQL = `SELECT block_height, kind, ref, position,
       (SELECT name FROM accounts WHERE id = a.other_account) AS other_account_id,
       (SELECT name FROM accounts WHERE id = a.contract) AS contract_id, amount
FROM account_activity_ids a
WHERE account = (SELECT id FROM accounts WHERE name = $1) AND (block_height, kind, ref, position) < ($2, $3, $4, $5)
ORDER BY block_height DESC, kind DESC, ref DESC, position DESC
LIMIT 50`

// events backfills --events-blocks heights with the explorer tables and
// without, alternating (--runs of each), then times pages of the busiest
// account's activity at several depths and checks their plan.
func (e *benchEnv) events(ctx context.Context) error {
	to, err := e.lastBlock(ctx, min(e.o.eventsBlocks, e.o.blocks))
	if err != nil {
		return err
	}
	r := &eventsReport{rows: map[string]int64{}, bytes: map[string]int64{}}
	var onURL string
	for i := range e.o.runs {
		for _, skip := range []bool{true, false} {
			run, dbURL, err := e.backfillOnce(ctx, "nearline_bench_events", sourceRPC, e.chain.plainURL, to, skip)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "events run %d (explorer tables %s): %d blocks in %.1fs (%.1fs in Commit): %.2f blocks/s; CPU ms per block: indexer %.1f, PostgreSQL %.1f\n",
				i+1, onOff(!skip), run.blocks, run.seconds, run.commitSeconds, float64(run.blocks)/run.seconds,
				1000*run.cpu.self/float64(run.blocks), 1000*run.cpu.postgres/float64(run.blocks))
			if skip {
				r.off = append(r.off, run)
			} else {
				r.on = append(r.on, run)
				onURL = dbURL
			}
		}
	}
	pool, err := pgxpool.New(ctx, onURL)
	if err != nil {
		return fmt.Errorf("open events database: %w", err)
	}
	defer pool.Close()
	for _, t := range []string{"ft_events", "nft_events", "mt_events", "account_activity"} {
		var n int64
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return fmt.Errorf("count %s: %w", t, err)
		}
		r.rows[t] = n
		var size int64 // the table under the view (migration 00018)
		if err := pool.QueryRow(ctx, `SELECT coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree($1)), pg_total_relation_size($1))`, t+"_ids").Scan(&size); err != nil {
			return fmt.Errorf("size of %s: %w", t, err)
		}
		r.bytes[t] = size
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE account_activity_ids"); err != nil {
		return fmt.Errorf("analyze account_activity: %w", err)
	}
	if err := pool.QueryRow(ctx, `SELECT account_id, count(*) FROM account_activity GROUP BY 1 ORDER BY 2 DESC LIMIT 1`).
		Scan(&r.account, &r.total); err != nil {
		return fmt.Errorf("busiest account: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	defer conn.Release()
	for _, frac := range []float64{0, 0.1, 0.5, 0.9, 0.999} {
		depth := int64(frac * float64(r.total-50))
		var (
			height   int64
			kind     string
			ref      int32
			position int64
		)
		// The cursor: the key of the row at that depth (not timed).
		if err := conn.QueryRow(ctx, `SELECT block_height, kind, ref, position FROM account_activity_ids
			WHERE account = (SELECT id FROM accounts WHERE name = $1) ORDER BY block_height DESC, kind DESC, ref DESC, position DESC OFFSET $2 LIMIT 1`, r.account, depth).
			Scan(&height, &kind, &ref, &position); err != nil {
			return fmt.Errorf("cursor at depth %d: %w", depth, err)
		}
		if depth == 0 { // the first page: no cursor yet, above every height
			// (kind stays a label of activity_kind: '' is not one).
			height, ref, position = 1<<62, 0, 0
		}
		var took []time.Duration
		for range 200 {
			began := time.Now()
			rows, err := conn.Query(ctx, activityPageSQL, r.account, height, kind, ref, position)
			if err != nil {
				return fmt.Errorf("activity page: %w", err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("activity page: %w", err)
			}
			took = append(took, time.Since(began))
			if n != 50 {
				return fmt.Errorf("activity page at depth %d: %d rows, want 50", depth, n)
			}
		}
		slices.Sort(took)
		r.pages = append(r.pages, pageDepth{depth: depth, p50: took[len(took)/2], p99: took[len(took)*99/100]})
		if frac == 0.5 {
			r.plan, r.oneScan, err = explainPage(ctx, conn.Conn(), r.account, height, kind, ref, position)
			if err != nil {
				return err
			}
		}
	}
	e.report.events = r
	return nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// explainPage runs EXPLAIN ANALYZE on a page and reports its plan's nodes
// and whether it is one index scan of account_activity under a Limit.
func explainPage(ctx context.Context, conn *pgx.Conn, args ...any) (string, bool, error) {
	var raw []byte
	if err := conn.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+activityPageSQL, args...).Scan(&raw); err != nil {
		return "", false, fmt.Errorf("explain activity page: %w", err)
	}
	type node struct {
		NodeType     string `json:"Node Type"`
		ScanDir      string `json:"Scan Direction"`
		IndexName    string `json:"Index Name"`
		IndexCond    string `json:"Index Cond"`
		Filter       string `json:"Filter"`
		ActualRows   int64  `json:"Actual Rows"`
		SharedHit    int64  `json:"Shared Hit Blocks"`
		SharedRead   int64  `json:"Shared Read Blocks"`
		Plans        []node `json:"Plans"`
		RelationName string `json:"Relation Name"`
		Parent       string `json:"Parent Relationship"`
	}
	var plans []struct {
		Plan node `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		return "", false, fmt.Errorf("decode plan: %v", err)
	}
	var parts []string
	var walk func(n node)
	walk = func(n node) {
		s := n.NodeType
		if n.IndexName != "" {
			s += fmt.Sprintf(" %s using %s (%s; rows %d, buffers hit %d read %d)", n.ScanDir, n.IndexName, n.IndexCond, n.ActualRows, n.SharedHit, n.SharedRead)
		}
		if n.Filter != "" {
			s += " filter " + n.Filter
		}
		parts = append(parts, s)
		for _, c := range n.Plans {
			walk(c)
		}
	}
	top := plans[0].Plan
	walk(top)
	// The account's number and the other accounts' names are subplans
	// (InitPlan, SubPlan) beside the scan, one probe of accounts each.
	outer := func(n node) []node {
		var main []node
		for _, c := range n.Plans {
			if c.Parent != "InitPlan" && c.Parent != "SubPlan" {
				main = append(main, c)
			}
		}
		return main
	}
	under := outer(top)
	one := top.NodeType == "Limit" && len(under) == 1 && under[0].NodeType == "Index Scan" &&
		under[0].IndexName == "account_activity_pkey" && len(outer(under[0])) == 0 && under[0].Filter == ""
	return strings.Join(parts, " → "), one, nil
}

func (r *report) printEvents(w io.Writer) {
	ev := r.events
	if ev == nil || len(ev.on) == 0 || len(ev.off) == 0 {
		return
	}
	rate := func(x indexRun) float64 { return float64(x.blocks) / x.seconds }
	on, off := medianBy(ev.on, rate), medianBy(ev.off, rate)
	commit := func(x indexRun) float64 { return x.commitSeconds }
	onC, offC := medianBy(ev.on, commit), medianBy(ev.off, commit)
	pg := func(x indexRun) float64 { return 1000 * x.cpu.postgres / float64(x.blocks) }
	onP, offP := medianBy(ev.on, pg), medianBy(ev.off, pg)
	// Runs alternate off, on: each pair ran under about the same load
	// from the rest of the machine, so the median of the pairs' ratios is
	// the steadier figure.
	var pairs []float64
	var each []string
	for i := range min(len(ev.on), len(ev.off)) {
		ratio := rate(ev.on[i]) / rate(ev.off[i])
		pairs = append(pairs, ratio)
		each = append(each, fmt.Sprintf("%.0f%%", 100*ratio))
	}
	slices.Sort(pairs)
	fmt.Fprintf(w, "| backfill, %d blocks, explorer tables on (%d ft, %d nft, %d mt event rows, %d activity rows) | %.2f blocks/s; %.1f s in Commit; PostgreSQL %.1f ms CPU per block | `--events=false`: %.2f blocks/s; %.1f s in Commit; PostgreSQL %.1f ms | medians %.0f%%; median of the %d pairs' ratios %.0f%% (%s) | ≥ 90%% |\n",
		on.blocks, ev.rows["ft_events"], ev.rows["nft_events"], ev.rows["mt_events"], ev.rows["account_activity"],
		rate(on), onC.commitSeconds, pg(onP), rate(off), offC.commitSeconds, pg(offP), 100*rate(on)/rate(off),
		len(pairs), 100*pairs[len(pairs)/2], strings.Join(each, ", "))
	var total int64
	for _, b := range ev.bytes {
		total += b
	}
	fmt.Fprintf(w, "| storage of the explorer tables per block (tables + indexes) | %s: ft_events %s, nft_events %s, mt_events %s, account_activity %s | | | |\n",
		kib(float64(total)/float64(on.blocks)), kib(float64(ev.bytes["ft_events"])/float64(on.blocks)),
		kib(float64(ev.bytes["nft_events"])/float64(on.blocks)), kib(float64(ev.bytes["mt_events"])/float64(on.blocks)),
		kib(float64(ev.bytes["account_activity"])/float64(on.blocks)))
	for _, p := range ev.pages {
		fmt.Fprintf(w, "| account activity page of 50 rows, %d rows deep of %d (`%s`), 1 client | p50 %s, p99 %s | | | p50 < 5 ms |\n",
			p.depth, ev.total, ev.account, ms(p.p50), ms(p.p99))
	}
	verdict := "one index range scan"
	if !ev.oneScan {
		verdict = "NOT one index range scan"
	}
	fmt.Fprintf(w, "\nAccount activity page plan (EXPLAIN ANALYZE, middle depth): %s: %s.\n", verdict, ev.plan)
}
