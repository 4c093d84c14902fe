package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"
)

// ErrRange is a height range the archive does not hold, or an empty one.
var ErrRange = errors.New("height range not in the archive")

// Defaults of PlanConfig.
const (
	DefaultSample            = 20
	DefaultAccountsPerHeight = 8
	DefaultKeysPerAccount    = 2
	DefaultTxsPerHeight      = 10
	DefaultCallsPerContract  = 4
)

// PlanConfig chooses what Plan asks. The zero value of every field takes
// its default.
type PlanConfig struct {
	// From and To bound the heights sampled. Default (nil): the archive's
	// first and latest block.
	From, To *uint64
	// Sample is how many heights of [From, To] are asked about (every
	// height when the range is smaller). Default DefaultSample.
	Sample int
	// Seed makes the sample: the same seed over the same archive gives the
	// same requests. Default 0, a seed like any other.
	Seed uint64
	// AccountsPerHeight caps the accounts queried at a height among those
	// it touched; half as many again are drawn from the accounts the other
	// sampled heights saw. Default DefaultAccountsPerHeight.
	AccountsPerHeight int
	// KeysPerAccount caps the access keys asked about per account. Default
	// DefaultKeysPerAccount.
	KeysPerAccount int
	// TxsPerHeight caps the transactions, and separately the receipts,
	// asked about per height. Default DefaultTxsPerHeight.
	TxsPerHeight int
	// CallsPerContract caps the call_function requests per contract and
	// height (view-like exported methods first). Default
	// DefaultCallsPerContract.
	CallsPerContract int
	// Concurrency is how many heights are read from the archive at once.
	// Default DefaultConcurrency.
	Concurrency int
}

func (c PlanConfig) withDefaults() PlanConfig {
	c.Sample = cmp.Or(c.Sample, DefaultSample)
	c.AccountsPerHeight = cmp.Or(c.AccountsPerHeight, DefaultAccountsPerHeight)
	c.KeysPerAccount = cmp.Or(c.KeysPerAccount, DefaultKeysPerAccount)
	c.TxsPerHeight = cmp.Or(c.TxsPerHeight, DefaultTxsPerHeight)
	c.CallsPerContract = cmp.Or(c.CallsPerContract, DefaultCallsPerContract)
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	return c
}

func (c PlanConfig) validate() error {
	if c.Sample < 1 || c.AccountsPerHeight < 1 || c.KeysPerAccount < 1 || c.TxsPerHeight < 1 || c.CallsPerContract < 1 || c.Concurrency < 1 {
		return fmt.Errorf("sample, accounts, keys, transactions and calls per height and concurrency must be positive")
	}
	return nil
}

// Plan is the requests to ask, drawn from the archive.
type Plan struct {
	// From and To are the range sampled, within the archive's.
	From, To uint64
	// Heights are the sampled heights, ascending.
	Heights  []uint64
	Requests []Request
}

// NewPlan draws requests from the archive's answers at cfg.Sample heights
// of the range: see the package doc. logger receives a line per planning
// step (nil: discard).
func NewPlan(ctx context.Context, archive Target, cfg PlanConfig, logger *slog.Logger) (*Plan, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := planner{archive: archive, cfg: cfg, logger: logger, exports: map[string][]string{}}
	first, latest, err := p.indexedRange(ctx)
	if err != nil {
		return nil, err
	}
	from, to := first, latest
	if cfg.From != nil {
		from = *cfg.From
	}
	if cfg.To != nil {
		to = *cfg.To
	}
	if from > to || from < first || to > latest {
		return nil, fmt.Errorf("%w: asked %d-%d, the archive holds %d-%d", ErrRange, from, to, first, latest)
	}
	heights := sampleHeights(from, to, cfg.Sample, cfg.Seed)
	logger.Info("verify plan", "from", from, "to", to, "heights", len(heights), "seed", cfg.Seed)

	seen := make([]heightSeen, len(heights))
	if err := p.each(ctx, heights, func(ctx context.Context, i int, h uint64) (err error) {
		seen[i], err = p.see(ctx, h)
		return err
	}); err != nil {
		return nil, err
	}
	pool := map[string]bool{}
	for _, s := range seen {
		for _, a := range s.accounts {
			pool[a] = true
		}
	}
	accounts := slices.Sorted(maps.Keys(pool))
	perHeight := make([][]Request, len(heights))
	if err := p.each(ctx, heights, func(ctx context.Context, i int, h uint64) (err error) {
		perHeight[i], err = p.requests(ctx, seen[i], accounts)
		return err
	}); err != nil {
		return nil, err
	}
	plan := &Plan{From: from, To: to, Heights: heights, Requests: []Request{
		NewRequest("genesis_config", nil),
		NewRequest("EXPERIMENTAL_genesis_config", nil),
	}}
	for _, reqs := range perHeight {
		plan.Requests = append(plan.Requests, reqs...)
	}
	logger.Info("verify plan ready", "heights", len(heights), "accounts", len(accounts), "requests", len(plan.Requests))
	return plan, nil
}

// sampleHeights returns n distinct heights of [from, to] (all of them when
// there are no more than n), ascending, chosen by seed.
func sampleHeights(from, to uint64, n int, seed uint64) []uint64 {
	span := to - from + 1
	if span == 0 || span <= uint64(n) { // span 0: the whole uint64 range
		out := make([]uint64, 0, span)
		for h := from; h <= to; h++ {
			out = append(out, h)
			if h == to {
				break
			}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x6e6561726c696e65))
	picked := map[uint64]bool{}
	for len(picked) < n {
		picked[from+rng.Uint64N(span)] = true
	}
	out := make([]uint64, 0, n)
	for h := range picked {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// pick returns up to n of items (all when there are no more), keeping
// their order, chosen by rng.
func pick[T any](rng *rand.Rand, items []T, n int) []T {
	if len(items) <= n {
		return items
	}
	idx := rng.Perm(len(items))[:n]
	slices.Sort(idx)
	out := make([]T, 0, n)
	for _, i := range idx {
		out = append(out, items[i])
	}
	return out
}

// planner reads what the requests are built from out of the archive.
type planner struct {
	archive Target
	cfg     PlanConfig
	logger  *slog.Logger

	mu      sync.Mutex
	exports map[string][]string // code hash → exported functions
}

// each runs fn for every height, cfg.Concurrency at once.
func (p *planner) each(ctx context.Context, heights []uint64, fn func(ctx context.Context, i int, h uint64) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.cfg.Concurrency)
	for i, h := range heights {
		g.Go(func() error { return fn(gctx, i, h) })
	}
	return g.Wait()
}

// ask sends one request to the archive and decodes its result into out.
// It reports false (and no error) when the archive answered an error or
// would forward the request.
func (p *planner) ask(ctx context.Context, method string, params any, out any) (bool, error) {
	body, err := p.archive.Answer(ctx, NewRequest(method, params).Body())
	if err != nil {
		return false, fmt.Errorf("ask archive %s: %w", method, err)
	}
	if IsForwarded(body) {
		return false, nil
	}
	a, err := ParseAnswer(body)
	if err != nil {
		return false, fmt.Errorf("ask archive %s: %w", method, err)
	}
	if a.Error != nil {
		// The archive's own failure (a database error, a timeout) would
		// silently thin the plan: it stops it instead.
		if name := failureName(a.Error); name != "" {
			return false, fmt.Errorf("ask archive %s: it answered %s", method, name)
		}
		return false, nil
	}
	if err := json.Unmarshal(a.Result, out); err != nil {
		return false, fmt.Errorf("decode archive %s result: %w", method, err)
	}
	return true, nil
}

// failureName names an error that is the server's failure rather than an
// answer about the chain (INTERNAL_ERROR, TIMEOUT_ERROR), or returns "".
func failureName(raw json.RawMessage) string {
	var e struct {
		Name  string `json:"name"`
		Cause struct {
			Name string `json:"name"`
		} `json:"cause"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	for _, n := range []string{e.Name, e.Cause.Name} {
		if n == "INTERNAL_ERROR" || n == "TIMEOUT_ERROR" {
			return n
		}
	}
	return ""
}

// indexedRange is the archive's first and latest block, from its status.
func (p *planner) indexedRange(ctx context.Context) (first, latest uint64, err error) {
	var status struct {
		SyncInfo struct {
			Earliest *uint64 `json:"earliest_block_height"`
			Latest   uint64  `json:"latest_block_height"`
		} `json:"sync_info"`
	}
	ok, err := p.ask(ctx, "status", []any{}, &status)
	if err != nil {
		return 0, 0, err
	}
	if !ok || status.SyncInfo.Earliest == nil {
		return 0, 0, fmt.Errorf("%w: the archive holds no block yet", ErrRange)
	}
	return *status.SyncInfo.Earliest, status.SyncInfo.Latest, nil
}
