package e2e

import "testing"

// freshDatabase returns the URL of a new, empty database for the binary to
// migrate and fill. (Wired to store/storetest once it exports a URL helper.)
func freshDatabase(t *testing.T) string {
	t.Helper()
	t.Fatal("freshDatabase: waiting for store/storetest")
	return ""
}
