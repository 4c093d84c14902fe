//go:build e2e

package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/internal/pgcluster"
)

// TestBackupRestoresToIdenticalAnswers follows docs/production.md's
// logical backup: pg_dump --format=custom of an indexed archive,
// pg_restore into an empty database, and `nearline serve` on each: every
// sampled request (every method, param form and error kind) gets the same
// answer from the restored archive as from the original.
func TestBackupRestoresToIdenticalAnswers(t *testing.T) {
	t.Parallel()
	bin, err := pgcluster.Bin()
	if err != nil {
		t.Fatalf("PostgreSQL's binaries (pg_dump, pg_restore): %v", err)
	}
	chain := binary.Chain(t, 120, "--seed", "13")
	dbURL := binary.IndexChain(t, 3*time.Minute, chain, "--genesis", chain.Genesis)

	dump := filepath.Join(t.TempDir(), "nearline.dump")
	if out, err := exec.Command(filepath.Join(bin, "pg_dump"), "--format=custom", "--file="+dump, dbURL).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	restored := e2ekit.FreshDatabase(t)
	if out, err := exec.Command(filepath.Join(bin, "pg_restore"), "--no-owner", "--exit-on-error", "--dbname="+restored, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}

	_, _, original := binary.Serve(t, dbURL)
	_, _, back := binary.Serve(t, restored)
	reqs := e2ekit.SampleRequests(t, chain.Client, chain.Shape, 12, 40)
	tally := e2ekit.Compare(t, original, back, reqs)
	e2ekit.RequireResults(t, tally, "block", "chunk")
	t.Logf("%d requests answered the same by the archive and its restored dump", len(reqs))
}
