package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/bench/realchain"
	"github.com/nearline/nearline/docsource/neardatatest"
)

// realReport is what the real phase measured: a chain of linked copies of
// a real block document (realchain), indexed by the nearline binary
// through --source neardata, defaults otherwise.
type realReport struct {
	doc      string
	height   uint64
	blocks   int64
	stats    realchain.Stats
	sizes    docSizes
	tables   []relSize
	seconds  float64
	user     float64 // indexer process, s
	sys      float64
	minflt   int64   // indexer process, minor page faults
	maxRSS   int64   // bytes
	pg       float64 // the database's backends, s
	pgShared float64 // the server's background processes (every database), s
	// warmCPU is the indexer's CPU per block from its first third of the
	// blocks to its second, over warmBlocks of them (0 when too few were
	// read).
	warmCPU    time.Duration
	warmBlocks int64
	machine    cpuSample
	statuses   map[string]int64
	requests   int64 // documents the indexer fetched
	heads      int64
	serve      []realServe
	workers    int
	batch      int
	events     bool
}

type realServe struct {
	method string
	load   load
}

func (e *benchEnv) real(ctx context.Context) error {
	raw, err := os.ReadFile(e.o.realDoc)
	if err != nil {
		return fmt.Errorf("read --real-doc: %w", err)
	}
	tpl, err := realchain.New(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", e.o.realDoc, err)
	}
	st := tpl.Stats()
	n := int(e.o.realBlocks)
	// Past the last height indexed, the copies its transactions' receipts
	// run in, so that its statuses complete as the others do.
	total := n + st.MaxDepth + 2
	began := time.Now()
	docs := make([][]byte, total)
	for k := range docs {
		if docs[k], err = tpl.Copy(k); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "real: %d copies of %s rendered in %.1fs: %+v\n", total, filepath.Base(e.o.realDoc), since(began), st)
	var sample [][]byte
	for k := 0; k < n; k += max(1, n/20) {
		sample = append(sample, docs[k])
	}
	r := &realReport{doc: filepath.Base(e.o.realDoc), height: tpl.Height(), blocks: int64(n), stats: st,
		workers: e.o.workers, batch: e.o.batchSize, events: e.o.realEvents}
	if r.sizes, err = measureDocs(sample); err != nil {
		return err
	}
	up := neardatatest.New(tpl.Height(), docs)
	defer up.Close()

	bin, err := buildNearline(ctx)
	if err != nil {
		return err
	}
	dir := filepath.Dir(bin)
	defer os.RemoveAll(dir)
	genesis := filepath.Join(dir, "genesis.json")
	if err := os.WriteFile(genesis, []byte(fmt.Sprintf(`{"chain_id":"realchain","genesis_height":%d,"records":[]}`, tpl.Height())), 0o644); err != nil {
		return fmt.Errorf("write genesis: %w", err)
	}
	dbURL, err := e.freshDatabase(ctx, "nearline_bench_real", false)
	if err != nil {
		return err
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return fmt.Errorf("parse database url: %w", err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	if err := e.runNearline(ctx, bin, filepath.Join(dir, "migrate.log"), "migrate", "--database-url", dbURL); err != nil {
		return err
	}
	db, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	before, err := relationSizes(ctx, db)
	db.Close(ctx)
	if err != nil {
		return err
	}

	admin, err := pgx.Connect(ctx, e.o.databaseURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	pg, err := startPGCPU(ctx, admin, dbName, 50*time.Millisecond)
	if err != nil {
		return err
	}
	first, last := tpl.Height(), tpl.Height()+uint64(n)-1
	args := []string{"index", "--database-url", dbURL, "--source", "neardata", "--upstream", up.URL(),
		"--genesis", genesis, "--from", strconv.FormatUint(first, 10), "--to", strconv.FormatUint(last, 10),
		"--progress-interval", "10s", "--events=" + strconv.FormatBool(e.o.realEvents)}
	if e.o.workers > 0 {
		args = append(args, "--workers", strconv.Itoa(e.o.workers))
	}
	if e.o.batchSize > 0 {
		args = append(args, "--batch-size", strconv.Itoa(e.o.batchSize))
	}
	var env []string
	if e.o.cpuprofile != "" {
		env = append(env, "NEARLINE_CPUPROFILE="+e.o.cpuprofile+".real-indexer.prof")
	}
	cpu0 := sampleCPU(0)
	began = time.Now()
	proc, err := startNearline(ctx, bin, filepath.Join(dir, "index.log"), e.o.verbose, env, args...)
	if err != nil {
		return err
	}
	hwm := watchHWM(proc.cmd.Process.Pid, 20*time.Millisecond)
	steady := watchSteady(ctx, dbURL, proc.cmd.Process.Pid, int64(first)+int64(n)/3, int64(first)+2*int64(n)/3, 50*time.Millisecond)
	runErr := proc.wait()
	r.maxRSS = hwm.finish()
	r.warmCPU, r.warmBlocks, _ = steady.finish()
	r.seconds = since(began)
	r.machine = sampleCPU(0).sub(cpu0)
	if r.pg, r.pgShared, err = pg.finish(ctx); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if ru, ok := proc.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.user = time.Duration(ru.Utime.Nano()).Seconds()
		r.sys = time.Duration(ru.Stime.Nano()).Seconds()
		r.minflt = ru.Minflt
	}
	r.requests, r.heads = up.Documents.Load(), up.Heads.Load()
	fmt.Fprintf(os.Stderr, "real: indexed %d blocks in %.1fs (%.1f blocks/s): indexer %.1f ms/block (user %.1fs, sys %.1fs, %.0f page faults a block), max RSS %s; PostgreSQL backends %.1f ms/block (server background %.1fs)\n",
		n, r.seconds, float64(n)/r.seconds, 1000*(r.user+r.sys)/float64(n), r.user, r.sys, float64(r.minflt)/float64(n), mib(float64(r.maxRSS)), 1000*r.pg/float64(n), r.pgShared)
	if line := stageLine(filepath.Join(dir, "index.log")); line != "" {
		fmt.Fprintf(os.Stderr, "real: %s\n", line)
	}

	if db, err = pgx.Connect(ctx, dbURL); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer db.Close(context.WithoutCancel(ctx))
	after, err := relationSizes(ctx, db)
	if err != nil {
		return err
	}
	r.tables = grownSizes(before, after)
	r.statuses = statusCounts(ctx, db)

	if err := e.realServing(ctx, r, tpl, bin, dbURL, first, n); err != nil {
		return err
	}
	e.report.real = append(e.report.real, r)
	return nil
}

// statusCounts counts the stored transaction statuses by
// final_execution_status (nil when the layout has no such table).
func statusCounts(ctx context.Context, db *pgx.Conn) map[string]int64 {
	rows, err := db.Query(ctx, `SELECT final_execution_status, count(*) FROM transaction_statuses GROUP BY 1`)
	if err != nil {
		return nil
	}
	out := map[string]int64{}
	for rows.Next() {
		var s string
		var c int64
		if rows.Scan(&s, &c) == nil {
			out[s] = c
		}
	}
	rows.Close()
	return out
}

// realServing measures serve's latency on the chain: one connection,
// requests one after another, for each method at random heights.
func (e *benchEnv) realServing(ctx context.Context, r *realReport, tpl *realchain.Template, bin, dbURL string, first uint64, n int) error {
	addr, stop, err := startServe(ctx, bin, dbURL)
	if err != nil {
		return err
	}
	defer stop()
	rng := rand.New(rand.NewPCG(e.o.seed, 26))
	shards, accounts := tpl.ShardIDs(), tpl.Accounts()
	makers := []struct {
		method string
		ok     bool
		make   func(k int) string
	}{
		{"block", true, func(k int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":%d}}`, first+uint64(k))
		}},
		{"chunk", len(shards) > 0, func(k int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"chunk","params":{"block_id":%d,"shard_id":%d}}`, first+uint64(k), shards[rng.IntN(len(shards))])
		}},
		{"EXPERIMENTAL_tx_status", len(tpl.Transactions(0)) > 0, func(k int) string {
			txs := tpl.Transactions(k)
			tx := txs[rng.IntN(len(txs))]
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"EXPERIMENTAL_tx_status","params":{"tx_hash":%q,"sender_account_id":%q}}`, tx.Hash, tx.SignerID)
		}},
		{"view_account", len(accounts) > 0, func(k int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"query","params":{"request_type":"view_account","account_id":%q,"block_id":%d}}`,
				accounts[rng.IntN(len(accounts))], first+uint64(k))
		}},
		{"EXPERIMENTAL_changes_in_block", true, func(k int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"EXPERIMENTAL_changes_in_block","params":{"block_id":%d}}`, first+uint64(k))
		}},
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	target := "http://" + addr
	for _, m := range makers {
		if !m.ok {
			continue
		}
		bodies := make([][]byte, 1024)
		for i := range bodies {
			bodies[i] = []byte(m.make(rng.IntN(n)))
		}
		if err := firstAnswerIsResult(ctx, client, target, bodies[0]); err != nil {
			return fmt.Errorf("%s: %w", m.method, err)
		}
		if _, err := runLoad(ctx, client, target, bodies, 1, 300*time.Millisecond); err != nil {
			return fmt.Errorf("%s: %w", m.method, err)
		}
		l, err := runLoad(ctx, client, target, bodies, 1, e.o.serveTime)
		if err != nil {
			return fmt.Errorf("%s: %w", m.method, err)
		}
		fmt.Fprintf(os.Stderr, "real: serve %-30s p50 %s, p99 %s, %.0f req/s, errors %d\n", m.method, ms(l.p50), ms(l.p99), l.rps, l.errors)
		r.serve = append(r.serve, realServe{method: m.method, load: l})
	}
	return nil
}

// firstAnswerIsResult posts body and requires a JSON-RPC result.
func firstAnswerIsResult(ctx context.Context, client *http.Client, target string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if !isResult(buf.Bytes()) {
		return fmt.Errorf("no result to %s: %.300s", body, buf.Bytes())
	}
	return nil
}

// nearlineProc is a running nearline binary.
type nearlineProc struct {
	cmd     *exec.Cmd
	logPath string
	done    chan error
}

// startNearline starts the binary with args, its output into logPath (and
// the benchmark's stderr too when tee), env added to the environment.
func startNearline(ctx context.Context, bin, logPath string, tee bool, env []string, args ...string) (*nearlineProc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	var out io.Writer = f
	if tee {
		out = io.MultiWriter(f, os.Stderr)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start nearline %s: %w", args[0], err)
	}
	p := &nearlineProc{cmd: cmd, logPath: logPath, done: make(chan error, 1)}
	go func() {
		err := cmd.Wait()
		f.Close()
		p.done <- err
	}()
	return p, nil
}

// wait waits for the process to exit; a failure carries its log's tail.
func (p *nearlineProc) wait() error {
	err := <-p.done
	if err == nil {
		return nil
	}
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return fmt.Errorf("nearline %s: %w:\n%s", p.cmd.Args[1], err, b)
}

// runNearline runs the binary with args to its end.
func (e *benchEnv) runNearline(ctx context.Context, bin, logPath string, args ...string) error {
	p, err := startNearline(ctx, bin, logPath, e.o.verbose, nil, args...)
	if err != nil {
		return err
	}
	return p.wait()
}

// stageLine returns the indexer's per-stage wall time from its log ("" when
// it logged none).
func stageLine(logPath string) string {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	const marker = "stage wall time per block"
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, marker); i >= 0 {
			return marker + ":" + strings.TrimPrefix(line[i+len(marker):], `"`)
		}
	}
	return ""
}
