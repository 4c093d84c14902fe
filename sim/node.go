package sim

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/rpcserve"
)

// Node is a simulated NEAR node: a deterministic chain served over NEAR's
// JSON-RPC. It implements rpcserve.Backend.
type Node struct {
	cfg     Config
	log     *slog.Logger
	started time.Time

	rpc http.Handler // rpcserve's protocol layer over the node

	mu    sync.RWMutex // guards chain
	chain *chain

	resumeAt atomic.Uint64 // ResumeAt's height: Run produces up to it at once
}

var _ rpcserve.Backend = (*Node)(nil)

// New builds the node's genesis. No block exists until Run or Produce.
// logger receives the node's logs (nil: discard).
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Node, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("validate sim config: %w", err)
	}
	logger = logs.OrDiscard(logger)
	c, err := newChain(ctx, cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("build genesis: %w", err)
	}
	n := &Node{cfg: cfg, log: logger, started: time.Now(), chain: c}
	if n.rpc, err = rpcserve.NewHandler(n, rpcserve.Config{}, n.log); err != nil {
		return nil, fmt.Errorf("build rpc handler: %w", err)
	}
	return n, nil
}

// Close releases the contract runtime.
func (n *Node) Close(ctx context.Context) error {
	if n.chain.vm != nil && n.chain.vm.owned {
		if err := n.chain.vm.rt.Close(ctx); err != nil {
			return fmt.Errorf("close contract runtime: %w", err)
		}
	}
	return nil
}

// Handler returns the node's JSON-RPC handler (rpcserve's protocol layer)
// and its block documents (neardata's /v0/ and NEAR Lake's /lake/, see
// document.go), wrapped in the fault-injection middleware.
func (n *Node) Handler() http.Handler {
	return newFaults(n.cfg.Faults, n.routes())
}

// HandlerWithFaults is Handler with faults in place of Config.Faults, so
// one produced chain can be served with and without latency (bench/).
func (n *Node) HandlerWithFaults(faults FaultConfig) http.Handler {
	return newFaults(faults.withDefaults(), n.routes())
}

// routes serves block documents beside JSON-RPC, which has every other
// path.
func (n *Node) routes() http.Handler {
	mux := http.NewServeMux()
	n.documentRoutes(mux)
	mux.Handle("/", n.rpcHandler())
	return mux
}

// rpcHandler is the protocol layer over the node, its answers rewritten
// as a newer nearcore's when Config.NearcoreNext is set.
func (n *Node) rpcHandler() http.Handler {
	if n.cfg.NearcoreNext {
		return nearcoreNextHandler(n.rpc)
	}
	return n.rpc
}

// Head returns the height and hash of the last produced block; ok is false
// before the first block.
func (n *Node) Head() (height uint64, hash string, ok bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	b := n.chain.head()
	if b == nil {
		return 0, "", false
	}
	return b.height, b.hash, true
}

// NextHeight returns the height Produce makes next.
func (n *Node) NextHeight() uint64 {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.chain.next
}

// Produce makes the next height: a block, or a skipped height.
func (n *Node) Produce(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.chain.produce()
}

// ProduceTo makes every height up to and including height.
func (n *Node) ProduceTo(ctx context.Context, height uint64) error {
	for n.NextHeight() <= height {
		if err := n.Produce(ctx); err != nil {
			return err
		}
	}
	return nil
}

// ResumeAt makes Run, when BlockTime is set, produce every height up to
// height at once before it goes on at one height per BlockTime: a node
// restarted under an archive that followed it resumes from the archive's
// head instead of replaying the chain at its pace (the chain is the same
// whatever the pace). Call it before Run.
func (n *Node) ResumeAt(height uint64) { n.resumeAt.Store(height) }

// Run produces blocks: all of them up to MaxHeight at once when BlockTime
// is 0, else one height per BlockTime until MaxHeight (or forever). It
// returns nil when production is done or ctx ends (the node keeps serving
// what it has), and an error only when production itself fails.
func (n *Node) Run(ctx context.Context) error {
	if n.cfg.BlockTime == 0 {
		start := time.Now()
		if err := n.ProduceTo(ctx, n.cfg.MaxHeight); err != nil {
			if ctx.Err() != nil {
				return nil // shutting down
			}
			return err
		}
		h, _, _ := n.Head()
		n.log.Info("chain produced", "height", h, "elapsed", time.Since(start))
		return nil
	}
	if err := n.Produce(ctx); err != nil { // genesis at once
		return err
	}
	if h := n.resumeAt.Load(); h >= n.NextHeight() {
		start := time.Now()
		if err := n.ProduceTo(ctx, h); err != nil {
			if ctx.Err() != nil {
				return nil // shutting down
			}
			return err
		}
		n.log.Info("chain regenerated up to the height to resume at", "height", h, "elapsed", time.Since(start).Round(time.Millisecond))
	}
	t := time.NewTicker(n.cfg.BlockTime)
	defer t.Stop()
	for {
		if n.cfg.MaxHeight != 0 && n.NextHeight() > n.cfg.MaxHeight {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := n.Produce(ctx); err != nil {
				if ctx.Err() != nil {
					return nil // shutting down
				}
				return err
			}
			if h, hash, ok := n.Head(); ok {
				n.log.Debug("block", "height", h, "hash", hash)
			}
		}
	}
}
