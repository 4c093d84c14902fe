// Package simtest gives tests a simulated chain: produced, served over
// HTTP as the upstream node, indexed into an archive the way
// `nearline index --genesis` fills one (its genesis.json loaded, then
// every height through the JSON-RPC source), and checked against what the
// simulator itself answers (check.go).
//
// Everything here is for tests: helpers take a testing.TB, fail the test
// on error, and stop what they started when the test ends.
package simtest

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

// Timeout bounds producing a chain, and indexing it.
const Timeout = 3 * time.Minute

// Chain is a simulated chain produced up to its MaxHeight and served.
type Chain struct {
	Node *sim.Node
	// URL is the node's JSON-RPC endpoint (and its neardata and lake
	// documents).
	URL string
	// Head is the last block produced: at the config's MaxHeight, or below
	// it when the chain skipped that height (an indexer could not tell it
	// skipped before a later block).
	Head uint64
}

// New produces cfg's chain up to cfg.MaxHeight and serves it (with
// cfg.Faults, if any).
func New(t testing.TB, cfg sim.Config) *Chain {
	t.Helper()
	c := Start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	require.NoError(t, c.Node.ProduceTo(ctx, cfg.MaxHeight), "simtest: produce to %d", cfg.MaxHeight)
	head, _, ok := c.Node.Head()
	require.True(t, ok, "simtest: the chain up to %d has no block", cfg.MaxHeight)
	c.Head = head
	return c
}

// Start serves cfg's chain with nothing produced yet (Head zero): for a
// test that produces it itself, in steps (Node.ProduceTo) or as time
// passes (Node.Run).
func Start(t testing.TB, cfg sim.Config) *Chain {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	node, err := sim.New(ctx, cfg, nil)
	require.NoError(t, err, "simtest: start simulator")
	t.Cleanup(func() { _ = node.Close(context.Background()) })
	srv := httptest.NewServer(node.Handler())
	t.Cleanup(srv.Close)
	return &Chain{Node: node, URL: srv.URL}
}

// Index indexes the chain into st with cfg through the JSON-RPC source
// (with short tx waits): with cfg.From nil, from the genesis, whose genesis.json is loaded first;
// with cfg.To nil, up to the chain's head.
func (c *Chain) Index(t testing.TB, st *store.Store, cfg indexer.Config) {
	t.Helper()
	var genesis *os.File
	if cfg.From == nil {
		genesis, _ = GenesisFile(t, c.Node)
	}
	if cfg.To == nil {
		cfg.To = &c.Head
	}
	index(t, st, cfg, genesis, NodeSource(t, c.Client(t), rpcsource.Config{Waits: waits()}))
}

// waits is how the sources of Index and IndexEndpoints wait for a
// transaction status that is not FINAL yet: briefly. A simulated chain's
// head moves only when its test produces more (or, run by Node.Run, every
// block time), not because a source waits: a status the chain left
// unfinished at its head stays so, and rpcsource's defaults would wait
// DefaultTxStallWait for it at every head indexed, for the same bytes.
func waits() upstream.Waits {
	return upstream.Waits{TxStallWait: 200 * time.Millisecond, TxPollInterval: 20 * time.Millisecond}
}

// Client is a JSON-RPC client of the chain's node, with the default
// timeouts and retries.
func (c *Chain) Client(t testing.TB) *upstream.Client {
	t.Helper()
	client, err := upstream.NewClient(upstream.Config{Endpoints: []string{c.URL}}, nil)
	require.NoError(t, err)
	return client
}

// IndexEndpoints indexes the simulators at endpoints (failing over in
// turn, with fast retries) up to to through a rpcsource.Source with short tx
// waits, after loading genesis when it is not nil.
func IndexEndpoints(t testing.TB, st *store.Store, to uint64, genesis *os.File, endpoints ...string) {
	t.Helper()
	client, err := upstream.NewClient(upstream.Config{Endpoints: endpoints, Timeout: 2 * time.Second,
		BaseBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 20}, nil)
	require.NoError(t, err)
	src := NodeSource(t, client, rpcsource.Config{Waits: waits()})
	index(t, st, indexer.Config{To: &to, Workers: 6, BatchSize: 25}, genesis, src)
}

// index loads genesis into st when it is not nil, then runs an indexer
// with cfg over src.
func index(t testing.TB, st *store.Store, cfg indexer.Config, genesis *os.File, src indexer.Source) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if genesis != nil {
		_, err := basestate.LoadGenesis(ctx, genesis, st, nil)
		require.NoError(t, err, "simtest: load genesis")
	}
	ix, err := indexer.New(cfg, src, st, nil)
	require.NoError(t, err)
	require.NoError(t, ix.Run(ctx), "simtest: index to %d", *cfg.To)
}

// Indexed produces and serves cfg's chain and indexes all of it, from its
// genesis, into a fresh archive.
func Indexed(t testing.TB, cfg sim.Config) (*Chain, *store.Store) {
	t.Helper()
	c := New(t, cfg)
	st := storetest.NewStore(t)
	c.Index(t, st, indexer.Config{})
	return c, st
}

// GenesisFile writes node's genesis to a file and returns it open, with
// the genesis accounts.
func GenesisFile(t testing.TB, node *sim.Node) (*os.File, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "genesis.json")
	require.NoError(t, node.WriteGenesis(path))
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	var accounts []string
	for _, r := range node.Genesis().Records {
		if r.Account != nil {
			accounts = append(accounts, r.Account.AccountID)
		}
	}
	return f, accounts
}

// NodeSource returns an rpcsource.Source reading rpc, failing the test on a
// configuration error.
func NodeSource(tb testing.TB, rpc upstream.RPC, cfg rpcsource.Config) *rpcsource.Source {
	tb.Helper()
	src, err := rpcsource.New(rpc, cfg, nil)
	require.NoError(tb, err)
	return src
}
