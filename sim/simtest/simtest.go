// Package simtest gives tests a simulated chain: produced, served over
// HTTP as the upstream node, and indexed into a fresh archive the way
// `nearline index --genesis` fills one (its genesis.json loaded, then
// every height through the JSON-RPC source).
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

	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcsource"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// Timeout bounds producing a chain, and indexing it.
const Timeout = 3 * time.Minute

// Chain is a simulated chain produced up to its MaxHeight and served.
type Chain struct {
	Node *sim.Node
	// URL is the node's JSON-RPC endpoint.
	URL string
	// Head is the last block produced: at the config's MaxHeight, or below
	// it when the chain skipped that height (an indexer could not tell it
	// skipped before a later block).
	Head uint64
}

// New produces cfg's chain up to cfg.MaxHeight and serves it.
func New(t testing.TB, cfg sim.Config) *Chain {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	node, err := sim.New(ctx, cfg, nil)
	if err != nil {
		t.Fatalf("simtest: start simulator: %v", err)
	}
	t.Cleanup(func() { _ = node.Close(context.Background()) })
	if err := node.ProduceTo(ctx, cfg.MaxHeight); err != nil {
		t.Fatalf("simtest: produce to %d: %v", cfg.MaxHeight, err)
	}
	head, _, ok := node.Head()
	if !ok {
		t.Fatalf("simtest: the chain up to %d has no block", cfg.MaxHeight)
	}
	srv := httptest.NewServer(node.Handler())
	t.Cleanup(srv.Close)
	return &Chain{Node: node, URL: srv.URL, Head: head}
}

// Index indexes the chain into st with cfg through the JSON-RPC source:
// with cfg.From nil, from the genesis, whose genesis.json is loaded first;
// with cfg.To nil, up to the chain's head.
func (c *Chain) Index(t testing.TB, st *store.Store, cfg indexer.Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if cfg.From == nil {
		path := filepath.Join(t.TempDir(), "genesis.json")
		if err := c.Node.WriteGenesis(path); err != nil {
			t.Fatalf("simtest: write genesis: %v", err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("simtest: %v", err)
		}
		defer f.Close()
		if _, err := basestate.LoadGenesis(ctx, f, st, nil); err != nil {
			t.Fatalf("simtest: load genesis: %v", err)
		}
	}
	if cfg.To == nil {
		cfg.To = &c.Head
	}
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{c.URL}})
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	src, err := rpcsource.NewNodeSource(client, rpcsource.NodeConfig{}, nil)
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	ix, err := indexer.New(cfg, src, st, nil)
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	if err := ix.Run(ctx); err != nil {
		t.Fatalf("simtest: index to %d: %v", *cfg.To, err)
	}
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
