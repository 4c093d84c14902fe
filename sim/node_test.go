package sim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	poll "github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/near"
)

func TestGCWindow(t *testing.T) {
	t.Parallel()
	cfg := testConfig(200)
	cfg.GCWindow = 50
	n, srv := startNode(t, cfg)
	c := n.chain
	head := c.head()
	var old, recent *block
	for _, b := range c.blocks {
		if b.height < head.height-60 {
			old = b
		}
		if b.height > head.height-40 && recent == nil {
			recent = b
		}
	}
	require.NotNil(t, old)
	require.NotNil(t, recent)
	r := rpc(t, srv.URL, "block", map[string]any{"block_id": old.height})
	require.Equal(t, "UNKNOWN_BLOCK", r.Error.Cause.Name)
	r = rpc(t, srv.URL, "block", map[string]any{"block_id": old.hash})
	require.Equal(t, "UNKNOWN_BLOCK", r.Error.Cause.Name)
	r = rpc(t, srv.URL, "chunk", map[string]any{"chunk_id": old.view.Chunks[0].ChunkHash})
	require.Equal(t, "UNKNOWN_CHUNK", r.Error.Cause.Name)
	r = rpc(t, srv.URL, "query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "block_id": old.height})
	require.Equal(t, "GARBAGE_COLLECTED_BLOCK", r.Error.Cause.Name)
	r = rpc(t, srv.URL, "EXPERIMENTAL_changes_in_block", map[string]any{"block_id": old.height})
	require.Equal(t, "UNKNOWN_BLOCK", r.Error.Cause.Name)
	rpcResult(t, srv.URL, "block", map[string]any{"block_id": recent.height})
	rpcResult(t, srv.URL, "query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "block_id": recent.height})
	var st near.StatusView
	require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "status", nil), &st))
	require.GreaterOrEqual(t, *st.SyncInfo.EarliestBlockHeight, head.height-50)
	// The same heights on an archival node answer.
	cfg.GCWindow = 0
	_, arch := startNode(t, cfg)
	rpcResult(t, arch.URL, "block", map[string]any{"block_id": old.height})
	rpcResult(t, arch.URL, "query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "block_id": old.height})
}

func TestFork(t *testing.T) {
	t.Parallel()
	cfg := testConfig(80)
	base, _ := startNode(t, cfg)
	cfg.ForkAt = 40
	fork, _ := startNode(t, cfg)
	var firstFork *block
	for h := uint64(0); h <= 80; h++ {
		a, b := base.chain.byHeight[h], fork.chain.byHeight[h]
		require.Equal(t, a == nil, b == nil, "same skipped heights")
		if a == nil {
			continue
		}
		if h < 40 {
			require.Equal(t, string(a.json), string(b.json), "height %d before the fork", h)
			continue
		}
		require.NotEqual(t, a.hash, b.hash, "height %d after the fork", h)
		if firstFork == nil {
			firstFork = b
		}
	}
	require.NotNil(t, firstFork)
	prev := fork.chain.byHeight[*firstFork.view.Header.PrevHeight]
	require.NotEqual(t, prev.hash, firstFork.view.Header.PrevHash, "the fork does not link to the block before it")
}

func TestGenesisFile(t *testing.T) {
	t.Parallel()
	n, srv := startNode(t, testConfig(5))
	path := filepath.Join(t.TempDir(), "genesis.json")
	require.NoError(t, n.WriteGenesis(path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var g near.GenesisFile
	require.NoError(t, json.Unmarshal(b, &g))
	require.Equal(t, n.chain.genesis.ChainID, g.ChainID)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(b, &raw))
	requireOpenAPI(t, "GenesisConfig", withoutRecords(raw))
	accounts, keys, contracts, data := 0, 0, 0, map[string]int{}
	for _, r := range g.Records {
		switch {
		case r.Account != nil:
			accounts++
			var v near.AccountView
			require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "query", map[string]any{"request_type": "view_account", "account_id": r.Account.AccountID, "block_id": 0}), &v))
			require.Equal(t, v.Amount, r.Account.Account.Amount)
			require.Equal(t, v.StorageUsage, r.Account.Account.StorageUsage)
			require.Equal(t, v.CodeHash, r.Account.Account.CodeHash)
		case r.AccessKey != nil:
			keys++
		case r.Contract != nil:
			contracts++
			require.Equal(t, near.HashOf(r.Contract.Code).String(), n.chain.st.accountAt(r.Contract.AccountID, 0).CodeHash)
		case r.Data != nil:
			data[r.Data.AccountID]++
		}
	}
	require.Equal(t, accounts, keys)
	require.Equal(t, len(contractKinds), contracts)
	var vs near.ViewStateResult
	require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "query", map[string]any{"request_type": "view_state", "account_id": "ft.near", "prefix_base64": "", "block_id": 0}), &vs))
	require.NotEmpty(t, vs.Values)
	require.Equal(t, len(vs.Values), data["ft.near"], "genesis data records are the contract's state")
	require.Contains(t, string(b), `"Account": {`)
}

func withoutRecords(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "records" {
			out[k] = v
		}
	}
	return out
}

func TestRunProducesOnATicker(t *testing.T) {
	t.Parallel()
	cfg := testConfig(0)
	cfg.BlockTime = 5 * time.Millisecond
	cfg.MaxHeight = 0
	cfg.NoContracts = true
	n, err := New(context.Background(), cfg, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	srv := startServer(t, n)
	// Readers run while blocks are made (go test -race checks the locking).
	go func() {
		for ctx.Err() == nil {
			_, _ = n.Query(ctx, near.QueryRequest{Block: near.BlockReference{Finality: "final"}, RequestType: near.QueryViewAccount, AccountID: "alice.near"})
			_, _ = n.Status(ctx)
			_ = n.Genesis()
		}
	}()
	var head uint64
	poll.For(t, 20*time.Second, "the node to reach height 20", func() bool {
		h, _, ok := n.Head()
		head = h
		return ok && h >= 20
	})
	rpcResult(t, srv, "block", map[string]any{"block_id": head})
	cancel()
	require.NoError(t, <-done)
}

func faultNode(t *testing.T, f FaultConfig) (*Node, string) {
	t.Helper()
	cfg := testConfig(20)
	cfg.NoContracts = true
	cfg.Faults = f
	n, srv := startNode(t, cfg)
	return n, srv.URL
}

func post(t *testing.T, url string, timeout time.Duration) (*http.Response, []byte, error) {
	t.Helper()
	client := &http.Client{Timeout: timeout}
	resp, err := client.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":"x","method":"block","params":{"block_id":3}}`))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// notJSON asks a node with faults f for a block and requires an answer
// that is not JSON.
func notJSON(t *testing.T, f FaultConfig) (*Node, []byte) {
	t.Helper()
	n, url := faultNode(t, f)
	_, body, err := post(t, url, time.Second)
	require.NoError(t, err)
	require.False(t, json.Valid(body))
	return n, body
}

func TestFaults(t *testing.T) {
	t.Parallel()
	t.Run("5xx", func(t *testing.T) {
		t.Parallel()
		_, url := faultNode(t, FaultConfig{Fail5xx: 1})
		resp, _, err := post(t, url, time.Second)
		require.NoError(t, err)
		require.GreaterOrEqual(t, resp.StatusCode, 500)
	})
	t.Run("internal", func(t *testing.T) {
		t.Parallel()
		_, url := faultNode(t, FaultConfig{FailInternal: 1})
		resp, body, err := post(t, url, time.Second)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode)
		var r near.Response
		require.NoError(t, json.Unmarshal(body, &r))
		require.Equal(t, "INTERNAL_ERROR", r.Error.Name)
		require.Equal(t, `"x"`, string(r.ID))
	})
	t.Run("malformed", func(t *testing.T) {
		t.Parallel()
		notJSON(t, FaultConfig{FailMalformed: 1})
	})
	t.Run("truncated", func(t *testing.T) {
		t.Parallel()
		n, body := notJSON(t, FaultConfig{FailTruncated: 1})
		require.True(t, strings.HasPrefix(`{"jsonrpc":"2.0","result":`+string(n.chain.byHeight[3].json), string(body)) ||
			strings.HasPrefix(string(body), `{"jsonrpc":"2.0"`), "a prefix of the real answer")
	})
	t.Run("stall", func(t *testing.T) {
		t.Parallel()
		_, url := faultNode(t, FaultConfig{Stall: 1, StallDuration: time.Minute})
		start := time.Now()
		_, _, err := post(t, url, 200*time.Millisecond)
		require.Error(t, err, "the client times out")
		require.Less(t, time.Since(start), 5*time.Second)
	})
	t.Run("latency", func(t *testing.T) {
		t.Parallel()
		_, url := faultNode(t, FaultConfig{Latency: 100 * time.Millisecond, LatencyJitter: 20 * time.Millisecond})
		start := time.Now()
		resp, _, err := post(t, url, 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode)
		require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
	})
	t.Run("rate limit", func(t *testing.T) {
		t.Parallel()
		_, url := faultNode(t, FaultConfig{RateLimit: 5})
		limited := 0
		for range 40 {
			resp, _, err := post(t, url, time.Second)
			require.NoError(t, err)
			if resp.StatusCode == http.StatusTooManyRequests {
				limited++
			}
		}
		require.Greater(t, limited, 5, "most of 40 quick requests past a burst of 5 are refused")
	})
	t.Run("faults never change the chain", func(t *testing.T) {
		t.Parallel()
		a, _ := faultNode(t, FaultConfig{Fail5xx: 0.5, Latency: time.Millisecond})
		b, _ := faultNode(t, FaultConfig{})
		require.Equal(t, a.chain.head().hash, b.chain.head().hash)
	})
	t.Run("fractions mix", func(t *testing.T) {
		t.Parallel()
		_, url := faultNode(t, FaultConfig{Fail5xx: 0.3, Seed: 9})
		ok, failed := 0, 0
		for range 60 {
			resp, _, err := post(t, url, time.Second)
			require.NoError(t, err)
			if resp.StatusCode == 200 {
				ok++
			} else {
				failed++
			}
		}
		require.Greater(t, ok, 20)
		require.Greater(t, failed, 5)
	})
}

func TestFinalityLag(t *testing.T) {
	t.Parallel()
	cfg := testConfig(60)
	cfg.FinalityLag = 2
	n := newNode(t, cfg)
	require.NoError(t, n.ProduceTo(context.Background(), 40))
	srv := startServer(t, n)
	blocks := n.chain.blocks
	height := func(finality string) uint64 {
		var v near.BlockView
		require.NoError(t, json.Unmarshal(rpcResult(t, srv, "block", map[string]any{"finality": finality}), &v))
		return v.Header.Height
	}
	require.Equal(t, blocks[len(blocks)-3].height, height("final"))
	require.Equal(t, blocks[len(blocks)-2].height, height("near-final"))
	require.Equal(t, blocks[len(blocks)-1].height, height("optimistic"))
	// The head's header names the final block.
	require.Equal(t, blocks[len(blocks)-3].hash, blocks[len(blocks)-1].view.Header.LastFinalBlock)
	require.NoError(t, n.ProduceTo(context.Background(), 60))
	require.Equal(t, n.chain.head().height, height("final"), "once production is over the tip is final")
}

// TestGenesisTime: a block's timestamp is the genesis time plus one second
// per height above the genesis (under 50 ms of jitter), and genesis_config
// carries the genesis time; by default it is DefaultGenesisTime.
func TestGenesisTime(t *testing.T) {
	t.Parallel()
	for _, genesis := range []time.Time{{}, time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)} {
		cfg := testConfig(20)
		cfg.GenesisTime = genesis
		want := genesis
		if want.IsZero() {
			want = DefaultGenesisTime
		}
		_, srv := startNode(t, cfg)
		var b near.BlockView
		require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "block", map[string]any{"finality": "final"}), &b))
		at := want.Add(time.Duration(b.Header.Height-cfg.GenesisHeight) * time.Second)
		got := time.Unix(0, int64(b.Header.Timestamp))
		require.True(t, !got.Before(at) && got.Before(at.Add(50*time.Millisecond)), "block %d at %s, want %s", b.Header.Height, got, at)
		var g near.GenesisConfig
		require.NoError(t, json.Unmarshal(rpcResult(t, srv.URL, "genesis_config", nil), &g))
		require.Equal(t, want.Format("2006-01-02T15:04:05.000000000Z"), g.GenesisTime)
	}
}
