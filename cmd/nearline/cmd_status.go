package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/nearline/nearline/store"
)

// runStatus prints the archive's indexed range, cursor and history start.
func runStatus(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "status", "--database-url URL")
	databaseURL := stringFlag(fs, env, "database-url", "NEARLINE_DATABASE_URL", "", "PostgreSQL URL of the archive (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *databaseURL == "" {
		fmt.Fprintln(fs.Output(), "nearline status: --database-url (or NEARLINE_DATABASE_URL) is required")
		fs.Usage()
		return errUsage
	}
	s, err := store.Open(ctx, *databaseURL, store.Config{MaxConns: 2, Logger: env.logger})
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.Status(ctx)
	if err != nil {
		return err
	}
	w := env.stdout
	if !st.HasCursor {
		fmt.Fprintln(w, "cursor:          none (nothing indexed yet)")
	} else {
		fmt.Fprintf(w, "cursor:          %d %s (updated %s)\n", st.Cursor.Height, st.Cursor.Hash, st.CursorUpdated.UTC().Format("2006-01-02T15:04:05Z"))
		fmt.Fprintf(w, "indexed range:   %d-%d\n", st.EarliestHeight, st.Cursor.Height)
		fmt.Fprintf(w, "blocks:          %d\n", st.Blocks)
		fmt.Fprintf(w, "skipped heights: %d\n", st.SkippedHeights)
		if st.Gaps > 0 {
			fmt.Fprintf(w, "gaps:            %d heights neither indexed nor skipped (re-run index --from to fill)\n", st.Gaps)
		}
	}
	start, err := s.HistoryStart(ctx)
	switch {
	case errors.Is(err, store.ErrNotFound):
		fmt.Fprintln(w, "history start:   unknown (no --genesis or --snapshot-accounts loaded)")
	case err != nil:
		return err
	default:
		fmt.Fprintf(w, "history start:   %d\n", start)
	}
	return nil
}
