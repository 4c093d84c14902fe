package indexer

import (
	"testing"
	"time"
)

// TestFollowerLogsQuietly: a follower that keeps up logs a line a minute,
// and at once when it falls behind or catches up again; one with no block
// yet (an upstream restarted below the cursor) likewise; a backfill logs
// every line.
func TestFollowerLogsQuietly(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tick := func(p *progress, d time.Duration) bool {
		at = at.Add(d)
		return p.quiet(at)
	}
	follower := newProgress(100, nil)
	if tick(follower, 5*time.Second) {
		t.Fatal("the first line of a follower with no block yet was left out")
	}
	if !tick(follower, 5*time.Second) {
		t.Fatal("a follower with no block yet logged twice within a minute")
	}
	follower.committed(105, 5, 50)
	follower.setHead(107)
	if !tick(follower, 5*time.Second) {
		t.Fatal("a follower keeping up logged within a minute of its last quiet line")
	}
	if tick(follower, time.Minute) {
		t.Fatal("a follower keeping up logged nothing for a minute")
	}
	follower.setHead(200) // falls behind
	if tick(follower, 5*time.Second) {
		t.Fatal("a follower that fell behind was not logged at once")
	}
	if tick(follower, 5*time.Second) {
		t.Fatal("a follower behind was not logged every interval")
	}
	follower.committed(199, 94, 900) // caught up again
	if tick(follower, 5*time.Second) {
		t.Fatal("a follower that caught up was not logged at once")
	}
	if !tick(follower, 5*time.Second) {
		t.Fatal("a follower keeping up logged again within a minute")
	}

	to := uint64(300)
	backfill := newProgress(100, &to)
	backfill.committed(110, 10, 100)
	backfill.setHead(112)
	for range 3 {
		if tick(backfill, 5*time.Second) {
			t.Fatal("a backfill's line was left out")
		}
	}
}

// TestETAFollowsASmoothedRate: the ETA's rate starts at the first window's
// rate and then moves a fifth of the way to each new one, so a window with
// no commit (a slow batch) lowers it by a fifth instead of to zero (the
// ETA of the report jumped from 4 s to none, and showed 0 s with
// 10 s to go).
func TestETAFollowsASmoothedRate(t *testing.T) {
	t.Parallel()
	p := newProgress(0, nil)
	for i, c := range []struct{ rate, want float64 }{{10, 10}, {0, 8}, {0, 6.4}, {20, 9.12}} {
		if got := p.smooth(c.rate); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Fatalf("line %d: smoothed rate %v after a window of %v blocks/s, want %v", i, got, c.rate, c.want)
		}
	}
}
