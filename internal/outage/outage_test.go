package outage_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/logtest"
	"github.com/nearline/nearline/internal/outage"
	"github.com/nearline/nearline/internal/retry"
	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/upstream"
)

// flakyNode answers 503 while down is set, else a result.
func flakyNode(t *testing.T, down *atomic.Bool) *upstream.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"x","result":7}`))
	}))
	t.Cleanup(srv.Close)
	c, err := upstream.NewClient(upstream.Config{Endpoints: []string{srv.URL}, MaxAttempts: 2,
		BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond}, nil)
	require.NoError(t, err)
	return c
}

var fast = retry.Backoff{Base: time.Millisecond, Max: 5 * time.Millisecond}

// TestOutageIsWaitedOutWithOneLinePerStateChange: many calls through an
// outage of many tries each log that the upstream is unreachable once and
// that it is back once, and all succeed once it is.
func TestOutageIsWaitedOutWithOneLinePerStateChange(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	client := flakyNode(t, &down)
	var logs logtest.Buffer
	tr := outage.New(outage.Config{Name: "node", Backoff: fast}, logs.Logger())
	require.False(t, tr.State().Down)

	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			errs[i] = tr.Do(context.Background(), "block", 0, func(ctx context.Context) error {
				return client.Call(ctx, "block", nil, nil)
			})
		})
	}
	wait.For(t, 10*time.Second, "calls to keep being tried while the upstream is down",
		func() bool { return tr.State().Failed >= 40 })
	st := tr.State()
	require.True(t, st.Down)
	require.WithinDuration(t, time.Now(), st.Since, 10*time.Second)
	down.Store(false)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.False(t, tr.State().Down)
	out := logs.String()
	require.Equal(t, 1, strings.Count(out, "upstream unreachable"), out)
	require.Equal(t, 1, strings.Count(out, "upstream back"), out)
	require.Contains(t, out, "upstream=node")
}

// TestALateFailureStartsNoOutage: a try begun during an outage whose
// failure comes back after another call ended the outage starts no new
// one: one line for the outage, one for its end.
func TestALateFailureStartsNoOutage(t *testing.T) {
	t.Parallel()
	var logs logtest.Buffer
	tr := outage.New(outage.Config{Name: "node", Backoff: fast}, logs.Logger())
	unavailable := fmt.Errorf("call block: %w", upstream.ErrUnavailable)

	lateStarted, release := make(chan struct{}), make(chan struct{})
	var lateTries atomic.Int32
	lateDone := make(chan error, 1)
	go func() {
		lateDone <- tr.Do(t.Context(), "block", 0, func(context.Context) error {
			if lateTries.Add(1) > 1 {
				return nil
			}
			close(lateStarted)
			<-release // answered after the outage ended
			return unavailable
		})
	}()
	<-lateStarted
	var tries int
	require.NoError(t, tr.Do(t.Context(), "block", 0, func(context.Context) error {
		if tries++; tries == 1 {
			return unavailable // the outage starts
		}
		return nil // and ends
	}))
	require.False(t, tr.State().Down)
	close(release)
	require.NoError(t, <-lateDone)
	require.EqualValues(t, 2, lateTries.Load())
	require.False(t, tr.State().Down)
	out := logs.String()
	require.Equal(t, 1, strings.Count(out, "upstream unreachable"), out)
	require.Equal(t, 1, strings.Count(out, "upstream back"), out)
}

// TestPatienceEndsABoundedCall: with a patience, a call through an outage
// that lasts longer fails with a *PatienceError wrapping the last error.
func TestPatienceEndsABoundedCall(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	client := flakyNode(t, &down)
	tr := outage.New(outage.Config{Backoff: fast}, nil)
	began := time.Now()
	err := tr.Do(context.Background(), "block", 200*time.Millisecond, func(ctx context.Context) error {
		return client.Call(ctx, "block", nil, nil)
	})
	var pe *outage.PatienceError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, upstream.ErrUnavailable)
	require.GreaterOrEqual(t, time.Since(began), 200*time.Millisecond)
	require.Contains(t, err.Error(), "upstream unreachable for")
	require.Contains(t, err.Error(), "patience of 200ms")
	require.True(t, tr.State().Down)
}

// TestOtherErrorsEndTheCallAtOnce: an error that is no outage (a NEAR
// error, a decode error) is returned from the first try and leaves the
// state alone; ctx ending ends the wait.
func TestOtherErrorsEndTheCallAtOnce(t *testing.T) {
	t.Parallel()
	tr := outage.New(outage.Config{Backoff: fast}, nil)
	tries := 0
	bad := errors.New("decode block: unexpected end of JSON input")
	err := tr.Do(context.Background(), "block", 0, func(context.Context) error { tries++; return bad })
	require.ErrorIs(t, err, bad)
	require.Equal(t, 1, tries)
	require.False(t, tr.State().Down)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = tr.Do(ctx, "block", 0, func(context.Context) error {
		return upstream.ErrUnavailable
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.True(t, tr.State().Down)
}

// TestAFailureNamesItsURLFlagAndKind: with a document upstream that is
// fine and an RPC upstream nothing listens at, the outage's log line and
// the error after the patience name the RPC URL, its flag and that the
// connection was refused, not the document upstream.
func TestAFailureNamesItsURLFlagAndKind(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	closed := srv.URL
	srv.Close()
	c, err := upstream.NewClient(upstream.Config{Endpoints: []string{closed}, MaxAttempts: 2,
		BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond}, nil)
	require.NoError(t, err)
	var logs logtest.Buffer
	tr := outage.New(outage.Config{Name: "https://mainnet.neardata.xyz",
		Flags:   map[string]string{"--upstream": "https://mainnet.neardata.xyz", "--rpc-upstream": closed},
		Backoff: retry.Backoff{Base: 10 * time.Millisecond, Max: 10 * time.Millisecond}}, logs.Logger())
	err = tr.Do(context.Background(), "genesis_config", 200*time.Millisecond, func(ctx context.Context) error {
		return c.Call(ctx, "EXPERIMENTAL_genesis_config", nil, nil)
	})
	var pe *outage.PatienceError
	require.ErrorAs(t, err, &pe)
	line := logs.String()
	require.Contains(t, line, "upstream="+closed)
	require.Contains(t, line, "flag=--rpc-upstream")
	require.Contains(t, line, "host=127.0.0.1")
	require.Contains(t, line, "failure=refused")
	require.NotContains(t, line, "neardata")
	require.Contains(t, err.Error(), "--rpc-upstream "+closed+": refused")

	first := outage.NeverAnswered(err)
	require.ErrorIs(t, first, err)
	require.Contains(t, first.Error(), "never answered this archive's first start within --upstream-patience 200ms")
	other := errors.New("not an outage")
	require.Equal(t, other, outage.NeverAnswered(other))
}
