package archive_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/archive"
	"github.com/nearline/nearline/basestate"
	"github.com/nearline/nearline/indexer"
	"github.com/nearline/nearline/internal/rpctest"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/nearvm"
	"github.com/nearline/nearline/rpcserve"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
	"github.com/nearline/nearline/upstream"
)

// partialChain is a simulated chain and an archive indexed from start (not
// genesis) without --genesis, optionally with a snapshot of some accounts.
type partialChain struct {
	*simtest.Chain
	vm    *nearvm.Runtime
	simH  http.Handler
	start uint64 // the first block at or above 14 (the chain skips some heights)
	// reqs are the chain's stateRequests, and want the simulator's answer
	// to each, asked once: the subtests compare archives with them.
	reqs []stateRequest
	want [][]byte
}

const partialHead = 40

func newPartialChain(t *testing.T, ctx context.Context) *partialChain {
	t.Helper()
	chain := simtest.New(t, sim.Config{Seed: 23, Shards: 3, TxsPerBlock: 8, SkipRate: 0.1, MissingChunkRate: 0.1, MaxHeight: partialHead,
		ProtocolVersion: 77}) // global contracts too: their code is exact whatever the account's coverage
	vm, err := nearvm.New(ctx, nearvm.Config{}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = vm.Close(context.Background()) })
	simH, err := rpcserve.NewHandler(chain.Node, rpcserve.Config{}, nil)
	require.NoError(t, err)
	c := &partialChain{Chain: chain, vm: vm, simH: simH}
	for c.start = 14; ; c.start++ {
		var block struct {
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(post(t, c.simH, rpctest.Request("block", map[string]any{"block_id": c.start})), &block))
		if block.Result != nil {
			return c
		}
	}
}

// partialContext is the context of a partial-archive test: it ends within
// four minutes, or with t.
func partialContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startPartialChain builds the chain the partial-archive tests share, its
// state requests and the simulator's answers to them.
func startPartialChain(t *testing.T) *partialChain {
	t.Helper()
	c := newPartialChain(t, partialContext(t))
	c.reqs = c.stateRequests(t)
	c.want = answerAll(t, c.simH, c.bodies())
	return c
}

// bodies are the bodies of c's state requests.
func (c *partialChain) bodies() []string {
	out := make([]string, len(c.reqs))
	for i, r := range c.reqs {
		out[i] = r.body
	}
	return out
}

// answerAll is h's answer to each of bodies, asked four at a time (an
// archive's answers wait on the database).
func answerAll(t *testing.T, h http.Handler, bodies []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(bodies))
	var g errgroup.Group
	g.SetLimit(4)
	for i, body := range bodies {
		g.Go(func() (err error) {
			out[i], err = answer(h, body)
			return err
		})
	}
	require.NoError(t, g.Wait())
	return out
}

// index indexes c.start..partialHead into a fresh archive, after a
// snapshot of snapshot (if any) at c.start, as `nearline index --from`.
func (c *partialChain) index(t *testing.T, ctx context.Context, snapshot []string) *store.Store {
	t.Helper()
	st := storetest.NewStore(t)
	if len(snapshot) > 0 {
		client, err := upstream.NewClient(upstream.Config{Endpoints: []string{c.URL}}, nil)
		require.NoError(t, err)
		require.NoError(t, basestate.Snapshot(ctx, client, st, c.start, snapshot, nil))
	}
	c.run(t, st, c.start, partialHead)
	return st
}

// run indexes from..to of c's chain into st.
func (c *partialChain) run(t *testing.T, st *store.Store, from, to uint64) {
	t.Helper()
	c.Index(t, st, indexer.Config{From: &from, To: &to})
}

func (c *partialChain) archive(t *testing.T, st *store.Store, forward string) http.Handler {
	return archiveHandler(t, st, c.vm, forward)
}

// archiveHandler serves the archive over st through rpcserve, forwarding
// to forward ("" for none).
func archiveHandler(t *testing.T, st *store.Store, vm *nearvm.Runtime, forward string) http.Handler {
	t.Helper()
	backend, err := archive.New(st, vm, archive.Config{}, nil)
	require.NoError(t, err)
	h, err := rpcserve.NewHandler(backend, rpcserve.Config{Forward: forward}, nil)
	require.NoError(t, err)
	return h
}

// stateRequest is one query and the account it is about.
type stateRequest struct {
	account, kind, body string
}

// stateRequests asks every state query about every account of the genesis
// and every account changed in the archive's range, at several heights
// from the archive's start on.
func (c *partialChain) stateRequests(t *testing.T) []stateRequest {
	t.Helper()
	genesis := c.Node.Genesis()
	accounts := map[string]bool{}
	keys := map[string][]string{}
	for _, r := range genesis.Records {
		switch {
		case r.Account != nil:
			accounts[r.Account.AccountID] = true
		case r.AccessKey != nil:
			keys[r.AccessKey.AccountID] = append(keys[r.AccessKey.AccountID], r.AccessKey.PublicKey)
		}
	}
	for h := uint64(c.start); h <= partialHead; h++ {
		var effects struct {
			Result struct {
				Changes []near.StateChangeKindView `json:"changes"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(post(t, c.simH, rpctest.Request("EXPERIMENTAL_changes_in_block", map[string]any{"block_id": h})), &effects))
		for _, e := range effects.Result.Changes {
			accounts[e.AccountID] = true
		}
	}
	var out []stateRequest
	add := func(id, kind string, params map[string]any) {
		params["request_type"], params["account_id"] = kind, id
		out = append(out, stateRequest{account: id, kind: kind, body: rpctest.Request("query", params)})
	}
	calls := map[string][][2]string{
		"status.near":    {{"get_status", `{"account_id":"alice.near"}`}},
		"ft.near":        {{"ft_total_supply", `{}`}, {"ft_balance_of", `{"account_id":"ft.near"}`}},
		"nft.near":       {{"nft_total_supply", `{}`}},
		"guestbook.near": {{"get_messages", `{}`}},
	}
	for _, h := range []uint64{c.start, c.start + 1, 20, 27, 33, partialHead} {
		for _, id := range sortedKeys(accounts) {
			for _, kind := range []string{"view_account", "view_code", "view_access_key_list"} {
				add(id, kind, map[string]any{"block_id": h})
			}
			add(id, "view_state", map[string]any{"prefix_base64": "", "block_id": h})
			for _, pk := range keys[id] {
				add(id, "view_access_key", map[string]any{"public_key": pk, "block_id": h})
			}
			for _, call := range calls[id] {
				add(id, "call_function", map[string]any{"method_name": call[0],
					"args_base64": base64.StdEncoding.EncodeToString([]byte(call[1])), "block_id": h})
			}
		}
	}
	return out
}

// refusal reports whether resp is the archive's "no complete state of
// this account" error, or its "global contract code ... is not in the
// archive" error (code distributed before the archive's first block).
func refusal(resp []byte, account string) bool {
	var env near.Response
	if json.Unmarshal(resp, &env) != nil || env.Error == nil {
		return false
	}
	switch env.Error.CauseName() {
	case "UNKNOWN_BLOCK":
		return bytes.Contains(env.Error.Data, []byte("no complete state of account "+account+" "))
	case "INTERNAL_ERROR":
		return bytes.Contains(env.Error.Data, []byte("The global contract code "+account+" uses ")) &&
			bytes.Contains(env.Error.Data, []byte(" is not in the archive"))
	}
	return false
}

// TestPartialArchive covers archives indexed from a height above genesis
// (not from it) without --genesis. Its subtests share one chain, its state
// requests and the simulator's answers to them, and one archive indexed
// from the chain's start without a snapshot; they only read them.
func TestPartialArchive(t *testing.T) {
	t.Parallel()
	c := startPartialChain(t)
	plain := c.index(t, partialContext(t), nil)
	t.Run("NeverAnswersWrongly", func(t *testing.T) {
		t.Parallel()
		partialNeverAnswersWrongly(t, c, plain)
	})
	t.Run("SnapshotAccountsAreExact", func(t *testing.T) {
		t.Parallel()
		partialSnapshotAccountsAreExact(t, c)
	})
	t.Run("SplitAnswersOnlyWhatItHolds", func(t *testing.T) {
		t.Parallel()
		splitAnswersOnlyWhatItHolds(t, c, plain)
	})
}

// partialNeverAnswersWrongly: an archive indexed from a height above
// genesis without --genesis, st, answers every state query either exactly
// as the node does or with the clear "no complete state" refusal; with an
// upstream, every answer equals the node's.
func partialNeverAnswersWrongly(t *testing.T, c *partialChain, st *store.Store) {
	ctx, reqs := partialContext(t), c.reqs

	// Accounts created in range (named sub-accounts by CreateAccount,
	// implicit ones by a transfer) have a creation base.
	sources := map[string]int{}
	for _, r := range reqs {
		if _, seen := sources["account:"+r.account]; seen {
			continue
		}
		sources["account:"+r.account] = 0
		_, source, err := st.AccountBase(ctx, r.account)
		if err == nil {
			sources[source]++
			if len(r.account) == 64 {
				sources["implicit "+source]++
			}
		} else {
			require.ErrorIs(t, err, store.ErrNotFound)
		}
	}
	t.Logf("account bases: creation %d (implicit %d), deletion %d", sources["creation"], sources["implicit creation"], sources["deletion"])
	require.Positive(t, sources["creation"]-sources["implicit creation"])
	require.Positive(t, sources["implicit creation"])

	answers := answerAll(t, c.archive(t, st, ""), c.bodies())
	exact, refused := map[string]int{}, map[string]int{}
	exactAccounts := map[string]bool{}
	wrong := 0
	for i, r := range reqs {
		want, got := c.want[i], answers[i]
		switch {
		case bytes.Equal(want, got):
			exact[r.kind]++
			exactAccounts[r.account] = true
		case refusal(got, r.account):
			refused[r.kind]++
		default:
			wrong++
			if wrong <= 10 {
				t.Errorf("wrong answer to %s\n sim:     %.500s\n archive: %.500s", r.body, want, got)
			}
		}
	}
	t.Logf("no base: %d requests over %d accounts; exact %v; refused %v; wrong %d", len(reqs), len(exactAccounts), exact, refused, wrong)
	require.Zero(t, wrong)
	// Both kinds of answer must occur: accounts created in range answer
	// everything; pre-existing ones answer view_account after their first
	// change and refuse the rest.
	for _, kind := range []string{"view_account", "view_code", "view_state", "view_access_key_list", "view_access_key", "call_function"} {
		require.Positive(t, refused[kind], "no refused %s: %v", kind, refused)
	}
	for _, kind := range []string{"view_account", "view_code", "view_state", "view_access_key_list"} {
		require.Positive(t, exact[kind], "no exact %s: %v", kind, exact)
	}

	// With an upstream, every answer is the node's.
	forwarded := answerAll(t, c.archive(t, st, c.URL), c.bodies())
	mismatches := 0
	for i, r := range reqs {
		want, got := c.want[i], forwarded[i]
		if !bytes.Equal(want, got) {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("forwarding archive differs on %s\n sim:     %.500s\n archive: %.500s", r.body, want, got)
			}
		}
	}
	require.Zero(t, mismatches)
}

// partialSnapshotAccountsAreExact: accounts snapshotted at the start of an
// archive indexed from above genesis answer exactly from the start; the
// others are answered exactly or refused.
func partialSnapshotAccountsAreExact(t *testing.T, c *partialChain) {
	snapshot := []string{"status.near", "ft.near", "guestbook.near", "alice.near", "nobody.near"}
	st := c.index(t, partialContext(t), snapshot)
	archiveH := c.archive(t, st, "")

	named := map[string]bool{}
	for _, id := range snapshot {
		named[id] = true
	}
	answers := answerAll(t, archiveH, c.bodies())
	checked, refusedOthers := 0, 0
	for i, r := range c.reqs {
		want, got := c.want[i], answers[i]
		if named[r.account] {
			checked++
			require.Equal(t, string(want), string(got), r.body)
			continue
		}
		if !bytes.Equal(want, got) {
			require.True(t, refusal(got, r.account), "wrong answer to %s\n sim:     %.500s\n archive: %.500s", r.body, want, got)
			refusedOthers++
		}
	}
	t.Logf("snapshot: %d requests about the %d named accounts all exact; %d refusals about others", checked, len(snapshot), refusedOthers)
	require.Positive(t, checked)
	require.Positive(t, refusedOthers)
	// Below the start the archive still refuses, naming its start.
	_, got := post(t, c.simH, rpctest.Request("query", map[string]any{"request_type": "view_account", "account_id": "ft.near", "block_id": c.start - 1})),
		post(t, archiveH, rpctest.Request("query", map[string]any{"request_type": "view_account", "account_id": "ft.near", "block_id": c.start - 1}))
	require.True(t, strings.Contains(string(got), "before the first block this archive holds"), "%s", got)
}

// indexRange indexes from..to of c's chain on cursor into the archive at
// url, as `nearline index --cursor cursor --from from --to to`.
func (c *partialChain) indexRange(t *testing.T, ctx context.Context, url, cursor string, from, to uint64) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, url, store.Config{MaxConns: 4, Cursor: cursor}, nil)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	c.run(t, st, from, to)
	return st
}

func errorData(t *testing.T, resp []byte) string {
	t.Helper()
	var env near.Response
	require.NoError(t, json.Unmarshal(resp, &env))
	require.NotNil(t, env.Error, "an error, not %s", resp)
	var data string
	require.NoError(t, json.Unmarshal(env.Error.Data, &data))
	return env.Error.CauseName() + ": " + data
}

// splitAnswersOnlyWhatItHolds fills an archive's upper range first and
// its lower range after: blocks of either range are answered at once; a
// height between them is UNKNOWN_BLOCK naming the heights not indexed yet;
// state at a height of the upper range is refused, naming them, until the
// lower range reaches it; then every state query is answered exactly as by
// an archive one indexer filled in order (plain).
func splitAnswersOnlyWhatItHolds(t *testing.T, c *partialChain, plain *store.Store) {
	ctx := partialContext(t)
	one := c.archive(t, plain, "")

	url := storetest.NewDatabaseURL(t)
	const mid = 26
	c.indexRange(t, ctx, url, "upper", mid, partialHead)
	lower := c.indexRange(t, ctx, url, "lower", c.start, c.start+4)
	low, ok, err := lower.Range(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	split := c.archive(t, lower, "")

	for h := mid; h <= partialHead; h++ {
		body := rpctest.Request("block", map[string]any{"block_id": h})
		require.JSONEq(t, string(post(t, c.simH, body)), string(post(t, split, body)), "block %d", h)
	}
	gap := fmt.Sprintf("heights #%d-#%d, which this archive has not indexed yet", low.Last.Height+1, mid-1)
	require.Contains(t, errorData(t, post(t, split, rpctest.Request("block", map[string]any{"block_id": mid - 1}))), "UNKNOWN_BLOCK: Block #25 is in "+gap)
	require.Contains(t, errorData(t, post(t, split, rpctest.Request("chunk", map[string]any{"block_id": mid - 2, "shard_id": 0}))), "UNKNOWN_BLOCK: Block #24 is in "+gap)
	notDecided := fmt.Sprintf("UNKNOWN_BLOCK: The state at block #33 is not complete in this archive yet: heights #%d-#%d below it are not indexed", low.Last.Height+1, mid-1)
	require.Contains(t, errorData(t, post(t, split, rpctest.Request("query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "block_id": 33}))), notDecided)
	require.Contains(t, errorData(t, post(t, split, rpctest.Request("query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "finality": "final"}))), "below it are not indexed")

	// The lower range, asked for more, stops where the upper one starts.
	c.indexRange(t, ctx, url, "lower", c.start, partialHead)
	low, _, err = lower.Range(ctx)
	require.NoError(t, err)
	require.Less(t, low.Last.Height, uint64(mid+2), "the lower range stops at the upper one")
	want, got := answerAll(t, one, c.bodies()), answerAll(t, split, c.bodies())
	for i, r := range c.reqs {
		require.Equal(t, string(want[i]), string(got[i]), r.body)
	}
	t.Logf("%d state queries answered as by one indexer", len(c.reqs))
}
