package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/store"
)

// chain is the produced simulated chain and its loopback servers.
type chain struct {
	plainURL   string // no faults
	distantURL string // --latency
	genesis    []byte // genesis.json
	close      func()
	pid        int // the simulator child's, 0 in process
}

// chainHeadroom is the heights produced past the last one backfilled: a
// skipped last height is known skipped only once a later block links
// over it, and the last blocks' transactions finish in later blocks.
const chainHeadroom = 50

func simConfig(o options) sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed, cfg.Shards, cfg.TxsPerBlock = o.seed, o.shards, o.txsPerBlock
	cfg.BlockTime, cfg.MaxHeight, cfg.DeployRate = 0, o.blocks+chainHeadroom, o.deployRate
	return cfg
}

func produceChain(ctx context.Context, o options) (*chain, error) {
	if o.simProcess {
		return startSimProcess(ctx, o)
	}
	node, err := sim.New(ctx, simConfig(o), nil)
	if err != nil {
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	last := o.blocks + chainHeadroom
	for h := min(last, 1000); ; h = min(h+1000, last) {
		if err := node.ProduceTo(ctx, h); err != nil {
			_ = node.Close(ctx)
			return nil, fmt.Errorf("produce chain: %w", err)
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Fprintf(os.Stderr, "produced up to %d (heap %d MiB)\n", h, m.HeapAlloc>>20)
		if h == last {
			break
		}
	}
	genesis, err := json.Marshal(node.Genesis())
	if err != nil {
		_ = node.Close(ctx)
		return nil, fmt.Errorf("encode genesis: %w", err)
	}
	plain := httptest.NewServer(node.Handler())
	distant := httptest.NewServer(node.HandlerWithFaults(sim.FaultConfig{Latency: o.latency}))
	return &chain{
		plainURL: plain.URL, distantURL: distant.URL, genesis: genesis,
		close: func() {
			plain.Close()
			distant.Close()
			_ = node.Close(context.Background())
		},
	}, nil
}

// benchEnv is what the phases share.
type benchEnv struct {
	o         options
	logger    *slog.Logger
	chain     *chain
	report    *report
	databases []string
	indexed   string // URL of the last backfilled database
	fetched   fetchCounts
}

// freshDatabase (re)creates database name on the server, migrated, and
// returns its URL.
func (e *benchEnv) freshDatabase(ctx context.Context, name string, migrate bool) (string, error) {
	// Two benchmarks on one server must not drop each other's databases.
	name = fmt.Sprintf("%s_%d", name, os.Getpid())
	admin, err := pgx.Connect(ctx, e.o.databaseURL)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", e.o.databaseURL, err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return "", fmt.Errorf("drop database %s: %w", name, err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	found := false
	for _, d := range e.databases {
		found = found || d == name
	}
	if !found {
		e.databases = append(e.databases, name)
	}
	u, err := url.Parse(e.o.databaseURL)
	if err != nil {
		return "", fmt.Errorf("parse database url: %w", err)
	}
	u.Path = "/" + name
	dbURL := u.String()
	if migrate {
		if err := store.Migrate(ctx, dbURL); err != nil {
			return "", err
		}
	}
	return dbURL, nil
}

func (e *benchEnv) dropDatabases(ctx context.Context) {
	if e.o.keep || len(e.databases) == 0 {
		return
	}
	admin, err := pgx.Connect(ctx, e.o.databaseURL)
	if err != nil {
		return
	}
	defer admin.Close(ctx)
	for _, d := range e.databases {
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+d+" WITH (FORCE)")
	}
}

// loadGenesis stores the chain's genesis records (not timed: `nearline index
// --genesis` does it once).
func (e *benchEnv) loadGenesis(ctx context.Context, s *store.Store) error {
	_, err := basestate.LoadGenesis(ctx, bytes.NewReader(e.chain.genesis), s, e.logger)
	return err
}

// machine describes the hardware and the database server.
func machine(ctx context.Context, dbURL string) string {
	parts := []string{fmt.Sprintf("%d CPUs", runtime.NumCPU())}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				parts = append(parts, strings.TrimSpace(strings.SplitN(line, ":", 2)[1]))
				break
			}
		}
	}
	if total := memTotal(); total > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB RAM", float64(total)/(1<<30)))
	}
	if conn, err := pgx.Connect(ctx, dbURL); err == nil {
		var v string
		if conn.QueryRow(ctx, "SHOW server_version").Scan(&v) == nil {
			parts = append(parts, "PostgreSQL "+v)
		}
		conn.Close(ctx)
	}
	return strings.Join(parts, ", ")
}

func since(t time.Time) float64 { return time.Since(t).Seconds() }

// memTotal returns the machine's memory in bytes (0 when unknown).
func memTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	var kb int64
	if _, err := fmt.Sscanf(strings.SplitN(string(b), "\n", 2)[0], "MemTotal: %d kB", &kb); err != nil {
		return 0
	}
	return kb << 10
}
