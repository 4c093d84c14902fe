package e2e

import (
	"testing"

	"github.com/nearline/nearline/store/storetest"
)

// freshDatabase returns the URL of a new, empty (unmigrated) database, so the
// binary's own start-up migration is exercised too.
func freshDatabase(t testing.TB) string {
	t.Helper()
	return storetest.NewEmptyDatabaseURL(t)
}
