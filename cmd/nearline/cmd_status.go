package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nearline/nearline/store"
)

// runStatus prints the archive's indexed ranges, the heights between them,
// its counts, its history start and, on a streaming replica, its lag.
func runStatus(ctx context.Context, env *environment, args []string) error {
	db, err := parseDatabaseCommand(env, "status", args)
	if err != nil {
		return err
	}
	s, closeStore, err := db.openStore(ctx, env, archiveUse{cfg: store.Config{MaxConns: 2}})
	if err != nil {
		return err
	}
	defer closeStore()
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
		for _, r := range st.Ranges {
			fmt.Fprintf(w, "range %-9s %d-%d, last block %s (updated %s)\n", r.Cursor+":", r.First, r.Last.Height, r.Last.Hash,
				r.Updated.UTC().Format("2006-01-02T15:04:05Z"))
		}
		for _, g := range st.UnindexedRuns {
			fmt.Fprintf(w, "not indexed:     %d-%d (%d heights between ranges)\n", g.First, g.Last, g.Last-g.First+1)
		}
		fmt.Fprintf(w, "blocks:          %d\n", st.Blocks)
		fmt.Fprintf(w, "skipped heights: %d\n", st.SkippedHeights)
		var between uint64
		for _, g := range st.UnindexedRuns {
			between += g.Last - g.First + 1
		}
		if other := st.Gaps - int64(between); other > 0 {
			fmt.Fprintf(w, "gaps:            %d heights inside ranges neither indexed nor skipped (re-run index --from to fill)\n", other)
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
	lag, replica, err := s.ReplicaLag(ctx)
	if err != nil {
		return err
	}
	if replica {
		fmt.Fprintf(w, "replica lag:     %s (a streaming replica: its replay trails the primary by this)\n", lag.Round(time.Millisecond))
	}
	return nil
}
