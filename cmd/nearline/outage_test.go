package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/chain"
	"github.com/nearline/nearline/internal/logtest"
	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// closedURL is an upstream no one answers at.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

// startCommand runs `nearline args...` in the background, its log in logs;
// cancel is its SIGINT, code its exit status.
func startCommand(t *testing.T, args ...string) (logs *logtest.Buffer, cancel func(), code <-chan int) {
	t.Helper()
	logs = &logtest.Buffer{}
	env, _, _ := testEnv(nil)
	env.logger = logs.Logger()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	exit := make(chan int, 1)
	go func() { exit <- run(ctx, env, args) }()
	return logs, cancel, exit
}

// TestRunWaitsForAnUpstreamDownAtStart: with its upstream down from the
// start, run following the head does not exit (it did in ~4 s): it serves,
// its /health fails saying why, and a signal stops it with exit status 0
// and no word of an indexer that finished.
func TestRunWaitsForAnUpstreamDownAtStart(t *testing.T) {
	t.Parallel()
	logs, cancel, code := startCommand(t, "run", "--database-url", storetest.NewDatabaseURL(t), "--upstream", closedURL(t),
		"--listen", "127.0.0.1:0", "--upstream-timeout", "200ms")
	listening := regexp.MustCompile(`msg="serving JSON-RPC" addr=(\S+)`)
	var addr string
	wait.For(t, time.Minute, "run to listen", func() bool {
		m := listening.FindStringSubmatch(logs.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	health := func() (int, string) {
		resp, err := http.Post("http://"+addr, "application/json",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"health","params":[]}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		get, err := http.Get("http://" + addr + "/health")
		require.NoError(t, err)
		get.Body.Close()
		return get.StatusCode, string(body)
	}
	wait.For(t, time.Minute, "the outage to be noticed", func() bool { return strings.Contains(logs.String(), "upstream unreachable") })
	status, body := health()
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "NO_NEW_BLOCKS")
	require.Contains(t, body, "The indexer cannot reach its upstream")
	time.Sleep(3 * time.Second) // the client's attempts are long spent: run is still there
	select {
	case c := <-code:
		t.Fatalf("run exited with %d while its upstream was down:\n%s", c, logs.String())
	default:
	}
	cancel()
	require.Equal(t, 0, <-code, logs.String())
	out := logs.String()
	require.Equal(t, 1, strings.Count(out, "upstream unreachable"), out)
	require.NotContains(t, out, "indexer finished")
	require.NotContains(t, out, "indexer reached --to")
	require.NotContains(t, out, "upstream call failed, retrying", "the client's attempts are logged at debug level")
}

// TestBoundedIndexGivesUpAfterPatience: index --to with its upstream down
// fails once --upstream-patience has passed, saying so.
func TestBoundedIndexGivesUpAfterPatience(t *testing.T) {
	t.Parallel()
	env, stdout, stderr := loggedEnv(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	code := run(ctx, env, []string{"index", "--database-url", storetest.NewDatabaseURL(t), "--upstream", closedURL(t),
		"--to", "10", "--upstream-timeout", "200ms", "--upstream-patience", "2s"})
	out := stdout.String() + stderr.String()
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "longer than the patience of 2s")
	require.GreaterOrEqual(t, time.Since(began), 2*time.Second)
}

// TestFromLatestStartsAtTheHead: --from latest starts an empty archive at
// the upstream's final head, and on an archive that holds heights resumes
// after the cursor.
func TestFromLatestStartsAtTheHead(t *testing.T) {
	t.Parallel()
	upstream, _ := simChain(t, 3)
	db := storetest.NewDatabaseURL(t)
	code, out := indexOnce(t, "--database-url", db, "--upstream", upstream, "--from", "latest", "--to", "20")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "--from latest: starting at the upstream's final head")
	blocks, _, cursor := archiveRows(t, db)
	require.Equal(t, 1, blocks, "only the head's block")
	require.Equal(t, int64(20), cursor)
	code, out = indexOnce(t, "--database-url", db, "--upstream", upstream, "--from", "latest", "--to", "20")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "the cursor holds heights already; resuming after it")
}

// TestRunSaysItsIndexerReachedTo: run whose indexer reaches --to says so
// and serves on until the signal, which it does not take for an indexer
// that finished.
func TestRunSaysItsIndexerReachedTo(t *testing.T) {
	t.Parallel()
	upstream, _ := simChain(t, 4)
	logs, cancel, code := startCommand(t, "run", "--database-url", storetest.NewDatabaseURL(t), "--upstream", upstream,
		"--listen", "127.0.0.1:0", "--to", "10")
	wait.For(t, time.Minute, "the indexer to reach --to", func() bool {
		return strings.Contains(logs.String(), "indexer reached --to; still serving until interrupted")
	})
	cancel()
	require.Equal(t, 0, <-code, logs.String())
	require.Equal(t, 1, strings.Count(logs.String(), "still serving until interrupted"), logs.String())
}

// TestFirstStartGivesUpOnAnUpstreamThatNeverAnswered: the first start of
// an archive, following the head, whose upstream never answered fails
// after --upstream-patience with exit status 1, naming the URL, its flag
// and the kind of failure; an archive that has followed before waits the
// same outage out.
func TestFirstStartGivesUpOnAnUpstreamThatNeverAnswered(t *testing.T) {
	t.Parallel()
	up := closedURL(t)
	args := func(dbURL string) []string {
		return []string{"index", "--database-url", dbURL, "--upstream", up,
			"--upstream-timeout", "200ms", "--upstream-patience", "2s"}
	}
	t.Run("first start", func(t *testing.T) {
		t.Parallel()
		env, stdout, stderr := loggedEnv(nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		code := run(ctx, env, args(storetest.NewDatabaseURL(t)))
		out := stdout.String() + stderr.String()
		require.Equal(t, 1, code, out)
		require.Contains(t, out, "never answered this archive's first start within --upstream-patience 2s")
		require.Contains(t, out, "--upstream "+up+": refused")
		require.Contains(t, out, "flag=--upstream host=127.0.0.1 failure=refused")
	})
	t.Run("followed before", func(t *testing.T) {
		t.Parallel()
		dbURL := storetest.NewDatabaseURL(t)
		s, err := store.Open(context.Background(), dbURL, store.Config{MaxConns: 2}, nil)
		require.NoError(t, err)
		err = s.RecordChainIdentity(context.Background(), chain.Identity{ChainID: "nearline-sim"})
		s.Close()
		require.NoError(t, err)
		logs, cancel, code := startCommand(t, args(dbURL)...)
		wait.For(t, time.Minute, "the outage to be noticed", func() bool { return strings.Contains(logs.String(), "upstream unreachable") })
		time.Sleep(4 * time.Second) // twice the patience
		select {
		case c := <-code:
			t.Fatalf("index exited with %d while the upstream of an archive that followed before was down:\n%s", c, logs.String())
		default:
		}
		cancel()
		<-code
	})
}
