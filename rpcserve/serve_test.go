package rpcserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store/storetest"
)

func TestServeAnswersAndShutsDown(t *testing.T) {
	t.Parallel()
	url := storetest.NewDatabaseURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeConfig{DatabaseURL: url, Listen: "127.0.0.1:0", Ready: func(a net.Addr) { ready <- a }})
	}()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve exited early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not become ready")
	}

	reqCtx, reqCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer reqCancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, "http://"+addr.String()+"/block",
		strings.NewReader(`{"params":{"finality":"final"}}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `"NOT_SYNCED_YET"`)

	resp, err = http.Get("http://" + addr.String() + "/metrics")
	require.NoError(t, err)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `nearline_rpc_requests_total{method="block",outcome="NOT_SYNCED_YET"} 1`)
	require.Contains(t, string(body), `go_goroutines`)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not shut down")
	}
}

func TestServeRejectsBadConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	require.ErrorContains(t, Serve(ctx, ServeConfig{}), "database url is required")
	require.ErrorContains(t, Serve(ctx, ServeConfig{DatabaseURL: "postgres://x", Handler: Config{Forward: "nope"}}), "forward url")
	err := Serve(ctx, ServeConfig{DatabaseURL: "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"})
	require.ErrorContains(t, err, "open archive")
}

// slowStore holds BlockStamp until release is closed.
type slowStore struct {
	ArchiveStore
	entered chan struct{}
	release chan struct{}
}

func (s *slowStore) BlockStamp(ctx context.Context, id near.BlockID) (near.BlockStamp, error) {
	s.entered <- struct{}{}
	<-s.release
	return s.ArchiveStore.BlockStamp(ctx, id)
}

func TestServeFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	st := &slowStore{ArchiveStore: seedStore(t), entered: make(chan struct{}, 1), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- ServeStore(ctx, st, ServeConfig{Listen: "127.0.0.1:0", ShutdownTimeout: 20 * time.Second,
			Ready: func(a net.Addr) { ready <- a }})
	}()
	addr := <-ready

	type answer struct {
		code int
		body string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.Post("http://"+addr.String()+"/", "application/json",
			strings.NewReader(`{"id":1,"method":"block","params":{"block_id":11}}`))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{code: resp.StatusCode, body: string(b), err: err}
	}()
	select { // the request is in flight
	case <-st.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the request never reached the store")
	}
	cancel() // shutdown begins

	// New connections are refused while the in-flight request waits.
	require.Eventually(t, func() bool {
		conn, err := net.DialTimeout("tcp", addr.String(), 200*time.Millisecond)
		if err == nil {
			conn.Close()
		}
		return err != nil
	}, 10*time.Second, 20*time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("serve returned before the in-flight request finished: %v", err)
	default:
	}

	close(st.release)
	got := <-answered
	require.NoError(t, got.err)
	require.Equal(t, http.StatusOK, got.code)
	require.Contains(t, got.body, `"height":11`)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after the in-flight request finished")
	}
}
