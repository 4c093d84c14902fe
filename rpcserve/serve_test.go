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
