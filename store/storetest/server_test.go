package storetest

import (
	"context"
	"strings"
	"testing"
)

// TestPingNamesHowToProvideAServer checks that a server that does not
// answer is reported with the ways to provide one.
func TestPingNamesHowToProvideAServer(t *testing.T) {
	err := ping(context.Background(), "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=5")
	if err == nil || !strings.Contains(err.Error(), EnvURL) {
		t.Fatalf("ping of a closed port = %v, want an error naming %s", err, EnvURL)
	}
}
