package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/nearline/nearline/internal/bounds"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/internal/logs"
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

// Every, as Sample or as a cap per height, takes everything: every height
// of the range, every account, key, transaction and receipt, every call.
const Every = math.MaxInt

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
	// it touched. Default DefaultAccountsPerHeight.
	AccountsPerHeight int
	// OtherAccounts is how many accounts are drawn besides, from the
	// accounts the other sampled heights saw. Default half of
	// AccountsPerHeight, at least 1.
	OtherAccounts int
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
	// AllAccountsEvery makes every AllAccountsEvery-th sampled height (the
	// first, every AllAccountsEvery-th after it, and the last) ask about
	// every account of the pool instead of a pick: state of accounts the
	// height did not touch. Default 0: none does.
	AllAccountsEvery int
	// Calls are known view calls by contract code hash (base58), asked of
	// the accounts running that code in place of the calls guessed from its
	// exports, whose arguments are a guess. Default: none known.
	Calls map[string][]Call
	// Edges adds what only two servers at the same head can be compared
	// on: the finality forms, the heights just past the head, hashes no
	// chain has, health and validators, unknown methods, malformed params,
	// and per contract an unknown method and a change method called as a
	// view. `nearline verify` leaves it off: a node ahead of the archive
	// answers "final" and the heights past the archive's head otherwise,
	// and the archive forwards what it does not hold. Default false.
	Edges bool
	// Concurrency is how many heights are read from the archive at once.
	// Default DefaultConcurrency.
	Concurrency int
}

func (c PlanConfig) withDefaults() PlanConfig {
	c.Sample = cmp.Or(c.Sample, DefaultSample)
	c.AccountsPerHeight = cmp.Or(c.AccountsPerHeight, DefaultAccountsPerHeight)
	c.OtherAccounts = cmp.Or(c.OtherAccounts, max(1, c.AccountsPerHeight/2))
	c.KeysPerAccount = cmp.Or(c.KeysPerAccount, DefaultKeysPerAccount)
	c.TxsPerHeight = cmp.Or(c.TxsPerHeight, DefaultTxsPerHeight)
	c.CallsPerContract = cmp.Or(c.CallsPerContract, DefaultCallsPerContract)
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	return c
}

func (c PlanConfig) validate() error {
	return errors.Join(
		bounds.AtLeast("sample", c.Sample, 1),
		bounds.AtLeast("accounts per height", c.AccountsPerHeight, 1),
		bounds.AtLeast("other accounts", c.OtherAccounts, 1),
		bounds.AtLeast("keys per account", c.KeysPerAccount, 1),
		bounds.AtLeast("transactions per height", c.TxsPerHeight, 1),
		bounds.AtLeast("calls per contract", c.CallsPerContract, 1),
		bounds.AtLeast("concurrency", c.Concurrency, 1),
		bounds.NotNegative("all accounts every", c.AllAccountsEvery),
	)
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
	logger = logs.OrDiscard(logger)
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
	if err := p.each(ctx, len(heights), func(ctx context.Context, i int) (err error) {
		seen[i], err = p.see(ctx, heights[i])
		return err
	}); err != nil {
		return nil, err
	}
	chain, err := newChainSeen(seen)
	if err != nil {
		return nil, err
	}
	if cfg.Edges {
		// The heights just past the head: every read of a height refused.
		seen = append(seen, heightSeen{height: to + 1}, heightSeen{height: to + 2})
	}
	perHeight := make([][]Request, len(seen))
	if err := p.each(ctx, len(seen), func(ctx context.Context, i int) (err error) {
		every := cfg.AllAccountsEvery > 0 && (i%cfg.AllAccountsEvery == 0 || i == len(heights)-1)
		perHeight[i], err = p.requests(ctx, seen[i], chain, every)
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
	if cfg.Edges {
		plan.Requests = append(plan.Requests, edgeRequests(to, chain.accounts)...)
	}
	logger.Info("verify plan ready", "heights", len(heights), "accounts", len(chain.accounts), "requests", len(plan.Requests))
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

// each runs fn for 0..n-1, cfg.Concurrency at once.
func (p *planner) each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.cfg.Concurrency)
	for i := range n {
		g.Go(func() error { return fn(gctx, i) })
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
