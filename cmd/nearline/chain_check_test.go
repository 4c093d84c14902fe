package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/sim/simtest"
	"github.com/nearline/nearline/store/storetest"
)

// simChain is a simulated chain of seed produced up to height 20 and
// served over HTTP, with its genesis file.
func simChain(t *testing.T, seed uint64) (url, genesis string) {
	t.Helper()
	chain := simtest.New(t, sim.Config{Seed: seed, Shards: 2, MaxHeight: 20})
	f, _ := simtest.GenesisFile(t, chain.Node)
	return chain.URL, f.Name()
}

// editedGenesis is the genesis file at path with members replaced.
func editedGenesis(t *testing.T, path string, members map[string]any) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var g map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &g))
	for k, v := range members {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		g[k] = b
	}
	out, err := json.Marshal(g)
	require.NoError(t, err)
	edited := filepath.Join(t.TempDir(), "edited.json")
	require.NoError(t, os.WriteFile(edited, out, 0o644))
	return edited
}

// archiveRows counts what an archive holds: blocks, state loaded from a
// genesis, and the cursor's height (-1 without one).
func archiveRows(t *testing.T, url string) (blocks, state int, cursor int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM blocks`).Scan(&blocks))
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM account_history`).Scan(&state))
	require.NoError(t, conn.QueryRow(ctx, `SELECT coalesce(max(height), -1) FROM indexer_cursor`).Scan(&cursor))
	return blocks, state, cursor
}

func indexOnce(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, stdout, stderr := loggedEnv(nil)
	code := run(ctx, env, append([]string{"index", "--progress-interval", "1h"}, args...))
	return code, strings.ReplaceAll(stdout.String()+stderr.String(), `\"`, `"`) // as the log line quotes the error
}

// TestChainMismatchSaysHowToStartOver: the refusal names the embedded
// PostgreSQL's directory, and the command that starts it over.
func TestChainMismatchSaysHowToStartOver(t *testing.T) {
	t.Parallel()
	db := &databaseFlags{dir: "/var/lib/nearline"}
	require.Equal(t, "the archive is the embedded PostgreSQL in /var/lib/nearline: index into another with --data-dir, "+
		"or stop the nearline processes using it and remove that directory (rm -r /var/lib/nearline) to start over", db.startOver())
}

// TestGenesisOfAnotherChainIsRefused: a genesis file of another chain than
// the upstream's (another simulator seed: same chain_id and height, other
// validators; or one edited to chain_id testnet and genesis_height 7) is
// refused before anything is written, naming both sides; the right one
// passes.
func TestGenesisOfAnotherChainIsRefused(t *testing.T) {
	t.Parallel()
	upstream, genesis5 := simChain(t, 5)
	_, genesis0 := simChain(t, 0)
	for _, c := range []struct {
		name    string
		genesis string
		want    []string
	}{
		{"another seed", genesis0, []string{"validators[0].public_key: --genesis " + genesis0 + " says"}},
		{"edited", editedGenesis(t, genesis5, map[string]any{"chain_id": "testnet", "genesis_height": 7}), []string{
			`chain_id: --genesis`, `says "testnet", the upstream ` + upstream + ` says "nearline-sim"`,
			"genesis_height: --genesis", "says 7, the upstream " + upstream + " says 0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := storetest.NewDatabaseURL(t)
			code, out := indexOnce(t, "--database-url", db, "--upstream", upstream, "--genesis", c.genesis, "--to", "10")
			require.Equal(t, 1, code, out)
			require.Contains(t, out, "the upstream "+upstream+" is of another chain than --genesis "+c.genesis)
			for _, w := range c.want {
				require.Contains(t, out, w)
			}
			blocks, state, cursor := archiveRows(t, db)
			require.Zero(t, blocks)
			require.Zero(t, state, "no genesis record loaded")
			require.Equal(t, int64(-1), cursor)
		})
	}
	db := storetest.NewDatabaseURL(t)
	code, out := indexOnce(t, "--database-url", db, "--upstream", upstream, "--genesis", genesis5, "--to", "10")
	require.Equal(t, 0, code, out)
	blocks, state, cursor := archiveRows(t, db)
	require.Positive(t, blocks)
	require.Positive(t, state)
	require.Equal(t, int64(10), cursor)
}

// TestArchiveRemembersItsChain: an archive indexed from one chain refuses
// an upstream of another (here with the same chain_id and genesis height:
// the genesis block's hash and validators differ), writing nothing, and
// goes on with its own.
func TestArchiveRemembersItsChain(t *testing.T) {
	t.Parallel()
	chain0, _ := simChain(t, 0)
	chain5, _ := simChain(t, 5)
	db := storetest.NewDatabaseURL(t)
	code, out := indexOnce(t, "--database-url", db, "--upstream", chain0, "--to", "10")
	require.Equal(t, 0, code, out)

	code, out = indexOnce(t, "--database-url", db, "--upstream", chain5, "--to", "20")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "the upstream "+chain5+" is of another chain than the archive (genesis block hash: the archive says")
	require.Contains(t, out, "the archive is the database "+httpcall.RedactURL(db)+
		": index into another with --database-url, or drop this one and create it again (dropdb, createdb) to start over")
	_, _, cursor := archiveRows(t, db)
	require.Equal(t, int64(10), cursor, "nothing written")

	code, out = indexOnce(t, "--database-url", db, "--upstream", chain0, "--to", "20")
	require.Equal(t, 0, code, out)
	_, _, cursor = archiveRows(t, db)
	require.Equal(t, int64(20), cursor)
}
