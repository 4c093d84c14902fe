package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/nearline/nearline/upstream"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// targetRequest is what a targetFunc is given of a request.
type targetRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// targetFunc is a Target from a function of the request.
type targetFunc func(r targetRequest) (string, error)

func (f targetFunc) Answer(_ context.Context, body []byte) ([]byte, error) {
	var r targetRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	out, err := f(r)
	return []byte(out), err
}

// heightOf reads the block_id a request names.
func heightOf(params json.RawMessage) int {
	var p struct {
		BlockID int `json:"block_id"`
	}
	_ = json.Unmarshal(params, &p)
	return p.BlockID
}

func TestRunCountsIdenticalDifferentAndForwarded(t *testing.T) {
	t.Parallel()
	var reqs []Request
	for h := range 40 {
		reqs = append(reqs,
			NewRequest("block", map[string]any{"block_id": h}),
			NewRequest("gas_price", map[string]any{"block_id": h}),
			NewRequest("EXPERIMENTAL_receipt", map[string]any{"block_id": h}))
	}
	archive := targetFunc(func(r targetRequest) (string, error) {
		h := heightOf(r.Params)
		switch {
		case r.Method == "EXPERIMENTAL_receipt" && h%2 == 0:
			return string(forwardedMarker), nil
		case r.Method == "block" && h%10 == 3:
			return `{"jsonrpc":"2.0","error":{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_BLOCK","info":{}},"data":"archive text"},"id":"verify"}`, nil
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","result":{"height":%d,"gas_price":"%d"},"id":"verify"}`, h, 100+h), nil
	})
	var nodeAsked atomic.Int64
	node := targetFunc(func(r targetRequest) (string, error) {
		nodeAsked.Add(1)
		h := heightOf(r.Params)
		switch {
		case r.Method == "block" && h%10 == 3:
			return `{"jsonrpc":"2.0","error":{"data":"node text","name":"HANDLER_ERROR","cause":{"info":{},"name":"UNKNOWN_BLOCK"}},"id":"verify"}`, nil
		case r.Method == "gas_price" && h >= 30:
			return fmt.Sprintf(`{"jsonrpc":"2.0","result":{"gas_price":"%d","height":%d},"id":"verify"}`, 1, h), nil
		}
		return fmt.Sprintf(`{"id":"verify","result":{"gas_price":"%d","height":%d}}`, 100+h, h), nil
	})
	report, err := Run(context.Background(), archive, node, reqs, RunConfig{Concurrency: 8, MaxShown: 3}, nil)
	require.NoError(t, err)
	require.Equal(t, []KindCount{
		{Kind: "EXPERIMENTAL_receipt", Requests: 40, Identical: 20, Forwarded: 20},
		{Kind: "block", Requests: 40, Identical: 40, Errors: 4},
		{Kind: "gas_price", Requests: 40, Identical: 30, Different: 10},
	}, report.Kinds)
	require.Equal(t, KindCount{Requests: 120, Identical: 90, Different: 10, Forwarded: 20, Errors: 4}, report.Total)
	require.Equal(t, 10, report.Different())
	require.EqualValues(t, 100, nodeAsked.Load(), "a request the archive forwards is not asked of the node")

	// The first differences in request order, whatever order they finished in.
	require.Len(t, report.Differences, 3)
	for i, m := range report.Differences {
		require.Equal(t, "gas_price", m.Request.Kind)
		require.Equal(t, 30+i, heightOf(m.Request.Params))
		require.Equal(t, Difference{Path: "result.gas_price", Archive: fmt.Sprintf(`"%d"`, 130+i), Node: `"1"`}, m.Difference)
	}

	var out bytes.Buffer
	require.NoError(t, report.Write(&out))
	text := out.String()
	for _, want := range []string{
		"method                requests identical different forwarded    errors\n",
		"EXPERIMENTAL_receipt        40        20         0        20         0\n",
		"gas_price                   40        30        10         0         0\n",
		"all                        120        90        10        20         4\n",
		"first 3 of 10 differences:\n",
		"  gas_price {\"block_id\":30}\n    at result.gas_price: archive \"130\", node \"1\"\n",
	} {
		require.Contains(t, text, want)
	}
}

func TestRunStopsWhenTheNodeCannotBeAsked(t *testing.T) {
	t.Parallel()
	ok := targetFunc(func(targetRequest) (string, error) {
		return `{"result":1}`, nil
	})
	down := targetFunc(func(targetRequest) (string, error) {
		return "", fmt.Errorf("%w: connection refused", ErrUnreachable)
	})
	reqs := []Request{NewRequest("block", map[string]any{"block_id": 1}), NewRequest("block", map[string]any{"block_id": 2})}
	_, err := Run(context.Background(), ok, down, reqs, RunConfig{}, nil)
	require.ErrorIs(t, err, ErrUnreachable)

	// A node answering something that is not a JSON-RPC response is not
	// reachable either.
	garbage := targetFunc(func(targetRequest) (string, error) {
		return "<html>", nil
	})
	_, err = Run(context.Background(), ok, garbage, reqs, RunConfig{}, nil)
	require.ErrorIs(t, err, ErrUnreachable)
}

func TestNodeRetriesWhatMayPass(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html>bad gateway</html>"))
		case 3:
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","result":`)) // truncated
		default:
			// nearcore sends INTERNAL_ERROR envelopes with HTTP 500: an answer.
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"name":"INTERNAL_ERROR"},"id":"verify"}`))
		}
	}))
	t.Cleanup(srv.Close)
	node, err := NewNode(upstream.Config{Endpoints: []string{srv.URL}, BaseBackoff: time.Millisecond})
	require.NoError(t, err)
	out, err := node.Answer(context.Background(), NewRequest("block", map[string]any{"block_id": 1}).Body())
	require.NoError(t, err)
	require.Contains(t, string(out), "INTERNAL_ERROR")
	require.EqualValues(t, 4, calls.Load())

	// Never an answer: ErrUnreachable after MaxAttempts tries.
	calls.Store(0)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(bad.Close)
	node, err = NewNode(upstream.Config{Endpoints: []string{bad.URL}, MaxAttempts: 3, BaseBackoff: time.Millisecond})
	require.NoError(t, err)
	_, err = node.Answer(context.Background(), []byte(`{}`))
	require.ErrorIs(t, err, ErrUnreachable)
	require.EqualValues(t, 3, calls.Load())

	_, err = NewNode(upstream.Config{Endpoints: []string{"localhost:3030"}})
	require.Error(t, err)
}

func TestSampleHeights(t *testing.T) {
	t.Parallel()
	require.Equal(t, []uint64{5, 6, 7}, sampleHeights(5, 7, 10, 1), "a range no larger than the sample is taken whole")
	require.Equal(t, []uint64{9}, sampleHeights(9, 9, 1, 1))
	a := sampleHeights(100, 10_099, 50, 7)
	require.Len(t, a, 50)
	for i, h := range a {
		require.GreaterOrEqual(t, h, uint64(100))
		require.LessOrEqual(t, h, uint64(10_099))
		if i > 0 {
			require.Less(t, a[i-1], h, "ascending, distinct")
		}
	}
	require.Equal(t, a, sampleHeights(100, 10_099, 50, 7), "same seed, same sample")
	require.NotEqual(t, a, sampleHeights(100, 10_099, 50, 8))
}

func TestReadOnlyURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://u@h:5432/db?sslmode=disable": "postgres://u@h:5432/db?default_transaction_read_only=on&sslmode=disable",
		"postgresql://h/db":                      "postgresql://h/db?default_transaction_read_only=on",
		"host=h dbname=db ":                      "host=h dbname=db default_transaction_read_only=on",
	} {
		require.Equal(t, want, ReadOnlyURL(in))
	}
	require.True(t, strings.HasSuffix(ReadOnlyURL("postgres://h/db?default_transaction_read_only=off"), "=on"))
}
