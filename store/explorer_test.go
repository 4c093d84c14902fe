package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// Event logs the explorer tests' outcomes carry.
const (
	ftTransferLog = `EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_transfer","data":[{"old_owner_id":"alice.near","new_owner_id":"bob.near","amount":"340282366920938463463374607431768211455","memo":"hi"}]}`
	nftMintLog    = `EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_mint","data":[{"owner_id":"bob.near","token_ids":["t1","t2"]}]}`
	mtBurnLog     = `EVENT_JSON:{"standard":"nep245","version":"1.0.0","event":"mt_burn","data":[{"owner_id":"bob.near","authorized_id":"market.near","token_ids":["g"],"amounts":["9"]}]}`
	malformedLog  = `EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"bob.near","amount":"-1"}]}`
	otherLog      = `EVENT_JSON:{"standard":"nep999","version":"1.0.0","event":"ft_mint","data":[]}`
)

// outcomeSpec is a receipt outcome addOutcomes adds.
type outcomeSpec struct {
	executor string
	logs     []string
	failed   bool
}

// addOutcomes adds to the first status of the bundle at h receipt outcomes
// executed at h+1, as specs say.
func addOutcomes(t *testing.T, b *bundle.Bundle, h uint64, specs ...outcomeSpec) {
	t.Helper()
	b.TxStatuses = append([]bundle.TxStatus(nil), b.TxStatuses...)
	st := &b.TxStatuses[0]
	var view near.FinalExecutionOutcomeView
	require.NoError(t, json.Unmarshal(st.JSON, &view))
	base := view.ReceiptsOutcome[0]
	for i, spec := range specs {
		o := base
		o.ID = storetest.FakeHash(fmt.Sprint("events-", h, "-", i, "-", spec.executor))
		o.Outcome.ExecutorID = spec.executor
		o.Outcome.Logs = spec.logs
		if spec.failed {
			o.Outcome.Status = json.RawMessage(`{"Failure":{"ActionError":{"index":0,"kind":{"FunctionCallError":{"ExecutionError":"Smart contract panicked"}}}}}`)
		}
		view.ReceiptsOutcome = append(view.ReceiptsOutcome, o)
	}
	raw, err := json.Marshal(view)
	require.NoError(t, err)
	st.JSON, st.Body = raw, nil
}

// withEvents adds to the bundle at h a successful outcome of token.near
// that logs ftTransferLog, nftMintLog, mtBurnLog, a plain log, otherLog and
// malformedLog, listed twice as the simulator's statuses once did (its
// events count once), and a failed one that logs ftTransferLog (not an
// event: it failed).
func withEvents(t *testing.T, b *bundle.Bundle, h uint64) {
	t.Helper()
	ok := outcomeSpec{executor: "token.near", logs: []string{ftTransferLog, "plain log", nftMintLog, otherLog, malformedLog, mtBurnLog}}
	addOutcomes(t, b, h, ok, outcomeSpec{executor: "token.near", logs: []string{ftTransferLog}, failed: true})
	st := &b.TxStatuses[0]
	var view near.FinalExecutionOutcomeView
	require.NoError(t, json.Unmarshal(st.JSON, &view))
	view.ReceiptsOutcome = append(view.ReceiptsOutcome, view.ReceiptsOutcome[len(view.ReceiptsOutcome)-2])
	raw, err := json.Marshal(view)
	require.NoError(t, err)
	st.JSON = raw
}

func eventBatch(t *testing.T, c *storetest.Chain, lo, hi uint64) []bundle.Bundle {
	t.Helper()
	var batch []bundle.Bundle
	for h := lo; h <= hi; h++ {
		b, ok := c.Bundle(h)
		require.True(t, ok)
		withEvents(t, &b, h)
		batch = append(batch, b)
	}
	return batch
}

// archiveSums checksums every table but the cursor.
func archiveSums(t *testing.T, s *store.Store) map[string]storetest.Sum {
	t.Helper()
	return storetest.TableSums(t, s.Pool(), "indexer_cursor")
}

func TestTokenEventsAreWrittenWithTheirBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 6, Shards: 2})

	stats, err := s.Commit(ctx, eventBatch(t, c, 1, 3))
	require.NoError(t, err)
	require.Equal(t, 3, stats.MalformedEventLogs, "one malformed log per block")

	// Per block: ft_transfer gives 2 rows, nft_mint 2 (two tokens), mt_burn
	// 1; the failed outcome, the plain log, the other standard and the
	// malformed log none.
	require.Equal(t, 6, count(t, s, "ft_events"))
	require.Equal(t, 6, count(t, s, "nft_events"))
	require.Equal(t, 3, count(t, s, "mt_events"))

	type ftRow struct {
		Account, Other, Delta, Memo, Version, Event string
		Log, Index, Item                            int
		Height, TxHeight                            int64
	}
	rows, _ := s.Pool().Query(ctx, `SELECT account_id, other_account_id, delta_amount::text, memo, version, event,
		log_index, event_index, item_index, block_height, tx_block_height FROM ft_events WHERE tx_block_height = 2
		ORDER BY event_index`)
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ftRow])
	require.NoError(t, err)
	require.Equal(t, []ftRow{
		{"alice.near", "bob.near", "-340282366920938463463374607431768211455", "hi", "1.0.0", "ft_transfer", 0, 0, 0, 3, 2},
		{"bob.near", "alice.near", "340282366920938463463374607431768211455", "hi", "1.0.0", "ft_transfer", 0, 1, 0, 3, 2},
	}, got)
	var tokens []string
	rows, _ = s.Pool().Query(ctx, `SELECT token_id || ':' || delta_amount || ':' || log_index || ':' || event_index
		FROM nft_events WHERE tx_block_height = 1 ORDER BY event_index`)
	tokens, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"t1:1:2:0", "t2:1:2:1"}, tokens)
	var mt string
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT account_id || ':' || token_id || ':' || delta_amount || ':' || authorized_id
		|| ':' || log_index FROM mt_events WHERE tx_block_height = 1`).Scan(&mt))
	require.Equal(t, "bob.near:g:-9:market.near:5", mt)

	// Receipts of block 3's transaction execute at 4, not committed yet:
	// no time until the commit that writes block 4.
	var untimed, timed int
	// (The blocks are read first: on a distributed archive the events are
	// not on their blocks' shards.)
	require.NoError(t, s.Pool().QueryRow(ctx, `WITH b AS MATERIALIZED (SELECT height, block_time FROM blocks)
		SELECT count(*) FILTER (WHERE e.block_time IS NULL), count(*) FILTER (WHERE e.block_time = b.block_time)
		FROM ft_events e LEFT JOIN b ON b.height = e.block_height`).Scan(&untimed, &timed))
	require.Equal(t, 2, untimed)
	require.Equal(t, 4, timed)

	stats, err = s.Commit(ctx, eventBatch(t, c, 4, 6))
	require.NoError(t, err)
	require.Equal(t, 3, stats.MalformedEventLogs)
	for _, table := range []string{"ft_events", "nft_events", "mt_events"} {
		require.NoError(t, s.Pool().QueryRow(ctx, `WITH b AS MATERIALIZED (SELECT height, block_time FROM blocks)
			SELECT count(*) FROM `+table+` e LEFT JOIN b ON b.height = e.block_height
			WHERE e.block_time IS DISTINCT FROM b.block_time AND e.block_height <= 6`).Scan(&untimed))
		require.Zero(t, untimed, "%s rows of committed blocks all have their block's time", table)
	}

	// Account activity: alice signs 2 transactions a block (one per shard)
	// and sends tokens once; bob receives both transactions, the action
	// receipts, the tokens and the NFTs and burns his MT.
	kinds := func(account string, height int64) map[string]int {
		rows, _ := s.Pool().Query(ctx, `SELECT kind, count(*)::int FROM account_activity
			WHERE account_id = $1 AND block_height = $2 GROUP BY kind`, account, height)
		out := map[string]int{}
		var k string
		var n int
		_, err := pgx.ForEachRow(rows, []any{&k, &n}, func() error { out[k] = n; return nil })
		require.NoError(t, err)
		return out
	}
	require.Equal(t, map[string]int{"tx_signer": 2, "balance": 1, "ft": 1}, kinds("alice.near", 5))
	require.Equal(t, map[string]int{"tx_receiver": 2, "receipt": 2, "ft": 1, "nft": 2, "mt": 1}, kinds("bob.near", 5))

	// Committing a range again rewrites it: the same rows, none twice.
	before := archiveSums(t, s)
	_, err = s.Commit(ctx, eventBatch(t, c, 1, 3))
	require.NoError(t, err)
	_, err = s.Commit(ctx, eventBatch(t, c, 4, 6))
	require.NoError(t, err)
	require.Equal(t, before, archiveSums(t, s))
}

func TestExplorerTablesCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.Open(ctx, storetest.NewDatabaseURL(t), store.Config{MaxConns: 2, SkipEvents: true}, nil)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 4})
	_, err = s.Commit(ctx, eventBatch(t, c, 1, 4))
	require.NoError(t, err)
	require.Equal(t, 4, count(t, s, "blocks"))
	for _, table := range []string{"ft_events", "nft_events", "mt_events", "account_activity"} {
		require.Zero(t, count(t, s, table), table)
	}
}

// withPartialStatus commits chain 1-3 with the events on, block 2's first
// status replaced by an EXECUTED one listing only the receipt outcomes
// keep leaves; it returns the store, the full batch and that status's ref.
func withPartialStatus(t *testing.T, keep func([]near.ExecutionOutcomeWithIDView) []near.ExecutionOutcomeWithIDView) (*store.Store, []bundle.Bundle, bundle.TxRef) {
	t.Helper()
	s := storetest.NewStore(t)
	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 3})
	full := eventBatch(t, c, 1, 3)
	partial := eventBatch(t, c, 1, 3)
	st := &partial[1].TxStatuses[0]
	var view near.FinalExecutionOutcomeView
	require.NoError(t, json.Unmarshal(st.JSON, &view))
	view.ReceiptsOutcome = keep(view.ReceiptsOutcome)
	view.FinalExecutionStatus = "EXECUTED"
	st.JSON, _ = json.Marshal(view)
	_, err := s.Commit(context.Background(), partial)
	require.NoError(t, err)
	return s, full, bundle.TxRef{TxHash: st.TxHash, SignerID: st.SignerID, Height: 2}
}

// TestUpdatedStatusAddsItsEvents: a status stored before all its receipts
// ran gets the events of the rest when it is replaced.
func TestUpdatedStatusAddsItsEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Block 2's first status lists only its first receipt's outcome.
	s, full, ref := withPartialStatus(t, func(os []near.ExecutionOutcomeWithIDView) []near.ExecutionOutcomeWithIDView { return os[:1] })
	require.Equal(t, 4, count(t, s, "ft_events"))

	require.NoError(t, s.UpdateTxStatus(ctx, ref, full[1].TxStatuses[0]))
	require.NoError(t, s.UpdateTxStatus(ctx, ref, full[1].TxStatuses[0]))
	want := archiveSums(t, s)

	other := storetest.NewStore(t)
	_, err := other.Commit(ctx, full)
	require.NoError(t, err)
	require.Equal(t, archiveSums(t, other), want)
	require.Equal(t, 6, count(t, s, "ft_events"))
}

// TestUpdatedStatusMovesItsEventsActivity: a newer status may list an
// outcome at another place (the outcomes of receipts an earlier one made
// before it); the activity rows of its events, named by that place
// (migration 00021), move with it, none left at the old place.
func TestUpdatedStatusMovesItsEventsActivity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Block 2's first status lists its events' outcome first, at place 1;
	// the full one lists it after the receipt before it, at place 2.
	s, full, ref := withPartialStatus(t, func(os []near.ExecutionOutcomeWithIDView) []near.ExecutionOutcomeWithIDView {
		require.Equal(t, "token.near", os[1].Outcome.ExecutorID)
		return os[1:2]
	})

	require.NoError(t, s.UpdateTxStatus(ctx, ref, full[1].TxStatuses[0]))
	other := storetest.NewStore(t)
	_, err := other.Commit(ctx, full)
	require.NoError(t, err)
	require.Equal(t, archiveSums(t, other), archiveSums(t, s))
	require.Equal(t, count(t, other, "account_activity"), count(t, s, "account_activity"))
}

func TestEveryCommitNotifiesItsBlocks(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := storetest.NewDatabaseURL(t)
	s, err := store.Open(ctx, url, store.Config{MaxConns: 2}, nil)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	listener, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { listener.Close(context.Background()) })
	_, err = listener.Exec(ctx, "LISTEN "+store.NotifyChannel)
	require.NoError(t, err)

	c := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 6})
	commitRange(t, s, c, 1, 3, 0)
	commitRange(t, s, c, 4, 6, 3)
	type note struct {
		Height      uint64 `json:"height"`
		Hash        string `json:"hash"`
		FirstHeight uint64 `json:"first_height"`
		Cursor      string `json:"cursor"`
	}
	for _, want := range []note{{3, storetest.BlockHash(3), 1, "main"}, {6, storetest.BlockHash(6), 4, "main"}} {
		n, err := listener.WaitForNotification(ctx)
		require.NoError(t, err)
		require.Equal(t, store.NotifyChannel, n.Channel)
		var got note
		require.NoError(t, json.Unmarshal([]byte(n.Payload), &got))
		require.Equal(t, want, got)
	}

	// A commit that fails when its transaction commits (a deferred
	// constraint trigger raises) notifies nobody. Citus takes no trigger
	// on a reference table such as the cursor's: there the notification
	// is PostgreSQL's own, on the coordinator, as checked above.
	if storetest.Citus() {
		t.Log("on Citus: the failed commit's silence is not checked (no trigger on a reference table)")
		return
	}
	_, err = s.Pool().Exec(ctx, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$;
		CREATE CONSTRAINT TRIGGER refuse_cursor AFTER UPDATE ON indexer_cursor
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse()`)
	require.NoError(t, err)
	c2 := storetest.NewChain(storetest.ChainConfig{Start: 1, End: 7})
	b, _ := c2.Bundle(7)
	_, err = s.Commit(ctx, []bundle.Bundle{b})
	require.ErrorContains(t, err, "refused at commit")
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancelShort()
	n, err := listener.WaitForNotification(short)
	require.Error(t, err, "no notification of a commit that failed, got %+v", n)
	require.ErrorIs(t, short.Err(), context.DeadlineExceeded)
}

// activityPageSQL is docs/database.md's page query (the joins naming its
// rows' hashes left out) as a prepared statement: the account by name,
// the cursor's key.
const activityPageSQL = `PREPARE activity_page(text, bigint, activity_kind, integer, bigint) AS
SELECT a.block_height, a.kind, a.ref, a.position,
       (SELECT name FROM accounts WHERE id = a.other_account) AS other_account_id,
       (SELECT name FROM accounts WHERE id = a.contract) AS contract_id, a.amount
FROM account_activity_ids a
WHERE a.account = (SELECT id FROM accounts WHERE name = $1)
  AND (a.block_height, a.kind, a.ref, a.position) < ($2, $3, $4, $5)
ORDER BY a.block_height DESC, a.kind DESC, a.ref DESC, a.position DESC
LIMIT 50`

// TestActivityPageIsOneIndexScan: an account's activity page, in the
// generic plan a prepared statement gets after five executions, reads the
// primary key backwards from the cursor, in the page's order: no sort of
// the account's rows (layout 3 measured a key of two columns making one,
// docs/database-storage.md). Unknown accounts get no rows.
func TestActivityPageIsOneIndexScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 150})
	conn, err := s.Pool().Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "ANALYZE account_activity_ids; ANALYZE accounts")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, activityPageSQL)
	require.NoError(t, err)
	plan := strings.Join(rowList(t, conn, `EXPLAIN EXECUTE activity_page('bob.near', 120, 'tx_receiver', 0, 0)`), "\n")
	require.Contains(t, plan, "Index Scan Backward using account_activity_pkey", plan)
	require.NotContains(t, plan, "Sort", plan)
	require.Contains(t, plan, "Limit", plan)

	pageRows := func(account string) int {
		rows, err := conn.Query(ctx, fmt.Sprintf(`EXECUTE activity_page('%s', 120, 'tx_receiver', 0, 0)`, account),
			pgx.QueryExecModeSimpleProtocol)
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			n++
		}
		require.NoError(t, rows.Err())
		return n
	}
	require.Equal(t, 50, pageRows(storetest.Bob))
	require.Zero(t, pageRows("nobody.near"))
}
