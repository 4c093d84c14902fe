package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServerURL returns the URL of the server the test databases are made on
// (its maintenance database), starting the server as NewDatabaseURL would:
// for the tests that act on the server itself, such as terminating a test
// database's backends.
func ServerURL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	u, err := serverURL(ctx)
	if err != nil {
		t.Fatalf("storetest: %v\nTo run these tests, %s.", err, howTo)
	}
	return u
}

// CheckServer makes sure the server the test databases are made on is at
// hand and answers, starting it as NewDatabaseURL would; its error says
// how to provide one. A TestMain calls it before it spends any work.
func CheckServer(ctx context.Context) error {
	u, err := serverURL(ctx)
	if err != nil {
		return fmt.Errorf("storetest: %v\nTo run these tests, %s", err, howTo)
	}
	return ping(ctx, u)
}

// ping connects to the server at u and runs one query.
func ping(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err == nil {
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, `SELECT 1`)
	}
	if err != nil {
		return fmt.Errorf("storetest: the test server does not answer: %v\nTo run these tests, %s", err, howTo)
	}
	return nil
}
