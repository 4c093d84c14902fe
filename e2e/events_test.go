//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/e2ekit"
)

// eventRow is one row the explorer tables should hold, as the test derives
// it from a log on its own (not with the events package).
type eventRow struct {
	Table, ReceiptID, Contract, Event, Account, Other, TokenID, Delta string
	Log, Index                                                        int
	Height                                                            int64
}

// expectedEventRows reads the simulator's block documents at heights
// 1..head and returns, for every EVENT_JSON log of NEP-141, NEP-171 or
// NEP-245 in a successful receipt outcome, its rows; and how many such
// logs there were per event name.
func expectedEventRows(t *testing.T, simURL string, head uint64) ([]eventRow, map[string]int) {
	t.Helper()
	tables := map[string]string{"nep141": "ft_events", "nep171": "nft_events", "nep245": "mt_events"}
	var rows []eventRow
	logs := map[string]int{}
	for h := uint64(1); h <= head; h++ {
		resp, err := http.Get(simURL + "/v0/block/" + strconv.FormatUint(h, 10))
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		var doc *struct {
			Shards []struct {
				Outcomes []struct {
					Outcome struct {
						ID      string `json:"id"`
						Outcome struct {
							Logs       []string                   `json:"logs"`
							ExecutorID string                     `json:"executor_id"`
							Status     map[string]json.RawMessage `json:"status"`
						} `json:"outcome"`
					} `json:"execution_outcome"`
				} `json:"receipt_execution_outcomes"`
			} `json:"shards"`
		}
		require.NoError(t, json.Unmarshal(body, &doc), "block document %d", h)
		if doc == nil {
			continue // skipped height
		}
		for _, sh := range doc.Shards {
			for _, o := range sh.Outcomes {
				eo := o.Outcome
				if _, failed := eo.Outcome.Status["Failure"]; failed {
					continue
				}
				for li, log := range eo.Outcome.Logs {
					body, ok := strings.CutPrefix(log, "EVENT_JSON:")
					if !ok {
						continue
					}
					var ev struct {
						Standard, Event string
						Data            []map[string]any
					}
					require.NoError(t, json.Unmarshal([]byte(body), &ev), log)
					table, ours := tables[ev.Standard]
					if !ours {
						continue
					}
					logs[ev.Event]++
					index := 0
					add := func(account, other, token, delta string) {
						rows = append(rows, eventRow{Table: table, ReceiptID: eo.ID, Contract: eo.Outcome.ExecutorID, Event: ev.Event,
							Account: account, Other: other, TokenID: token, Delta: delta, Log: li, Index: index, Height: int64(h)})
						index++
					}
					for _, item := range ev.Data {
						str := func(k string) string { s, _ := item[k].(string); return s }
						var tokens, amounts []string
						if ev.Standard == "nep141" {
							tokens, amounts = []string{""}, []string{str("amount")}
						} else {
							for i, id := range item["token_ids"].([]any) {
								tokens = append(tokens, id.(string))
								amounts = append(amounts, "1")
								if ev.Standard == "nep245" {
									amounts[i] = item["amounts"].([]any)[i].(string)
								}
							}
						}
						for i, token := range tokens {
							switch {
							case strings.HasSuffix(ev.Event, "_transfer"):
								add(str("old_owner_id"), str("new_owner_id"), token, "-"+amounts[i])
								add(str("new_owner_id"), str("old_owner_id"), token, amounts[i])
							case strings.HasSuffix(ev.Event, "_burn"):
								add(str("owner_id"), "", token, "-"+amounts[i])
							default:
								add(str("owner_id"), "", token, amounts[i])
							}
						}
					}
				}
			}
		}
	}
	return rows, logs
}

// TestTokenEventTablesHoldEveryEventLogOfTheSimulator indexes a simulated
// chain with the binary and requires ft_events, nft_events and mt_events
// to hold exactly the rows of the EVENT_JSON logs in the simulator's
// successful receipt outcomes (read from its block documents, so not
// through the transaction statuses the indexer reads), each at the height
// and time of the block that executed it; account_activity to hold a row
// for each of them, each transaction (signer and receiver), action receipt
// and account change, and nothing else; the indexer to have notified nearline_blocks of every commit,
// ending at the head; and `--events=false` (run at the same time, over the
// first 100 heights) to write none of them.
func TestTokenEventTablesHoldEveryEventLogOfTheSimulator(t *testing.T) {
	t.Parallel()
	const maxHeight = 300
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	chain := binary.Chain(t, maxHeight, "--seed", "5", "--shards", "4", "--txs-per-block", "8")
	shape, simURL, genesisPath := chain.Shape, chain.URL, chain.Genesis

	dbURL := e2ekit.FreshDatabase(t)
	listener, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer listener.Close(context.Background())
	_, err = listener.Exec(ctx, "LISTEN nearline_blocks")
	require.NoError(t, err)

	// --events=false, at the same time: the first 100 heights, no
	// explorer rows.
	const offTo = 100
	offURL := e2ekit.FreshDatabase(t)
	offIndex := binary.Start(t, "index", "--database-url", offURL, "--upstream", simURL, "--genesis", genesisPath,
		"--to", strconv.Itoa(offTo), "--events=false", "--progress-interval", "1h")

	to := strconv.FormatUint(shape.Head, 10)
	out, err := binary.Run(t, 5*time.Minute, "index", "--database-url", dbURL, "--upstream", simURL, "--genesis", genesisPath,
		"--to", to, "--batch-size", "7")
	require.NoError(t, err, e2ekit.Tail(out, 40))

	want, logs := expectedEventRows(t, simURL, shape.Head)
	t.Logf("%d heights: event logs by name %v, %d rows expected", shape.Head, logs, len(want))
	for _, event := range []string{"ft_transfer", "ft_burn", "nft_mint", "nft_transfer"} {
		require.Positive(t, logs[event], "the simulator's traffic logs %s", event)
	}

	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var got []eventRow
	for _, table := range []string{"ft_events", "nft_events", "mt_events"} {
		token := "token_id"
		if table == "ft_events" {
			token = "''"
		}
		rows, _ := conn.Query(ctx, fmt.Sprintf(`SELECT '%s', receipt_id, contract_id, event, account_id, coalesce(other_account_id, ''),
			%s, delta_amount::text, log_index, event_index, block_height FROM %s`, table, token, table))
		part, err := pgx.CollectRows(rows, pgx.RowToStructByPos[eventRow])
		require.NoError(t, err)
		got = append(got, part...)

		var untimed, wrong int
		require.NoError(t, conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FILTER (WHERE e.block_time IS NULL),
			count(*) FILTER (WHERE e.block_time IS DISTINCT FROM b.block_time)
			FROM %s e LEFT JOIN blocks b ON b.height = e.block_height`, table)).Scan(&untimed, &wrong))
		require.Zero(t, untimed, "%s rows without a block time", table)
		require.Zero(t, wrong, "%s rows whose time is not their block's", table)
	}
	key := func(r eventRow) string { return fmt.Sprintf("%s/%d/%d", r.ReceiptID, r.Log, r.Index) }
	sortRows := func(rows []eventRow) {
		slices.SortFunc(rows, func(a, b eventRow) int { return strings.Compare(key(a), key(b)) })
	}
	sortRows(want)
	sortRows(got)
	require.Equal(t, len(want), len(got), "rows")
	require.Equal(t, want, got)

	// Every event row is on its account's activity, at its height.
	var missing int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM (
		SELECT account_id, block_height, 'ft' AS kind, receipt_id, log_index, event_index FROM ft_events
		UNION ALL SELECT account_id, block_height, 'nft', receipt_id, log_index, event_index FROM nft_events
		UNION ALL SELECT account_id, block_height, 'mt', receipt_id, log_index, event_index FROM mt_events) e
		WHERE NOT EXISTS (SELECT 1 FROM account_activity a WHERE a.account_id = e.account_id
			AND a.block_height = e.block_height AND a.kind::text = e.kind AND a.ref_id = e.receipt_id
			AND a.position = (e.log_index::bigint << 32) + e.event_index)`).Scan(&missing))
	require.Zero(t, missing, "event rows without their activity row")

	// And every transaction for its signer and receiver, every action
	// receipt for its receiver, every account change the indexer wrote
	// (genesis records aside) for its account: nothing else.
	require.NoError(t, conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM transactions t WHERE NOT EXISTS (SELECT 1 FROM account_activity a
			WHERE a.account_id = t.signer_id AND a.block_height = t.block_height AND a.kind = 'tx_signer' AND a.ref_id = ''
			  AND a.position = (t.shard_id::bigint << 32) + t.index_in_chunk))
		+ (SELECT count(*) FROM transactions t WHERE NOT EXISTS (SELECT 1 FROM account_activity a
			WHERE a.account_id = t.receiver_id AND a.block_height = t.block_height AND a.kind = 'tx_receiver' AND a.ref_id = ''
			  AND a.position = (t.shard_id::bigint << 32) + t.index_in_chunk))
		+ (SELECT count(*) FROM receipts r WHERE r.kind = 'Action' AND NOT EXISTS (SELECT 1 FROM account_activity a
			WHERE a.account_id = r.receiver_id AND a.block_height = r.block_height AND a.kind = 'receipt' AND a.ref_id = ''
			  AND a.position = (r.shard_id::bigint << 32) + r.index_in_chunk))
		+ (SELECT count(*) FROM account_history h WHERE h.block_height > $1 AND NOT EXISTS (SELECT 1 FROM account_activity a
			WHERE a.account_id = h.account_id AND a.block_height = h.block_height AND a.kind = 'balance'))`,
		int64(shape.GenesisHeight)).Scan(&missing))
	require.Zero(t, missing, "transactions, receipts and account changes without their activity row")
	var activity, sources int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM account_activity),
		(SELECT 2 * count(*) FROM transactions) + (SELECT count(*) FROM receipts WHERE kind = 'Action')
		+ (SELECT count(*) FROM account_history WHERE block_height > $1)
		+ (SELECT count(*) FROM ft_events) + (SELECT count(*) FROM nft_events) + (SELECT count(*) FROM mt_events)`,
		int64(shape.GenesisHeight)).Scan(&activity, &sources))
	require.Equal(t, sources, activity, "account_activity rows")

	// The feed: one notification per commit, heights ascending, the last
	// the head.
	var heights []uint64
	for {
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
		n, err := listener.WaitForNotification(wctx)
		wcancel()
		if err != nil {
			break
		}
		var note struct {
			Height uint64 `json:"height"`
			Hash   string `json:"hash"`
		}
		require.NoError(t, json.Unmarshal([]byte(n.Payload), &note))
		var hash string
		require.NoError(t, conn.QueryRow(ctx, `SELECT hash FROM blocks WHERE height = $1`, note.Height).Scan(&hash))
		require.Equal(t, hash, note.Hash, "notified hash of %d", note.Height)
		heights = append(heights, note.Height)
	}
	require.NotEmpty(t, heights)
	require.True(t, slices.IsSorted(heights), "notified heights ascend: %v", heights)
	require.Equal(t, shape.Head, heights[len(heights)-1])
	require.GreaterOrEqual(t, len(heights), int(shape.Head)/7, "a notification per batch of 7 heights")

	// --events=false: the same chain's first heights, no explorer rows.
	err, exited := offIndex.WaitExit(5 * time.Minute)
	require.True(t, exited && err == nil, "nearline index --events=false: exited %v, %v\n%s", exited, err, e2ekit.Tail(offIndex.Output(), 40))
	require.True(t, slices.ContainsFunc(want, func(r eventRow) bool { return r.Height <= offTo }),
		"no event log in the heights --events=false indexed")
	off, err := pgx.Connect(ctx, offURL)
	require.NoError(t, err)
	defer off.Close(context.Background())
	for _, table := range []string{"ft_events", "nft_events", "mt_events", "account_activity"} {
		var n int
		require.NoError(t, off.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n))
		require.Zero(t, n, "%s with --events=false", table)
	}
	var blocks int
	require.NoError(t, off.QueryRow(ctx, "SELECT count(*) FROM blocks").Scan(&blocks))
	require.Positive(t, blocks)
}
