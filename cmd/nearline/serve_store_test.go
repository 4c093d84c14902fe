package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestServeSessionsAreReadOnly: the archive `nearline serve` opens has
// default_transaction_read_only on in its sessions (store's
// TestReadOnlySessionsRefuseWrites: a write is then refused).
func TestServeSessionsAreReadOnly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.Open(ctx, storetest.NewDatabaseURL(t), serveStoreConfig(2), nil)
	require.NoError(t, err)
	defer s.Close()
	var readOnly, app string
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT current_setting('default_transaction_read_only'), current_setting('application_name')`).Scan(&readOnly, &app))
	require.Equal(t, "on", readOnly)
	require.Equal(t, "nearline-serve", app)
}
