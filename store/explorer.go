package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/events"
	"github.com/nearline/nearline/internal/jsonobject"
)

// The explorer tables (migration 00008): token events parsed from the
// EVENT_JSON logs of successful receipt outcomes, and account_activity.
// Config.SkipEvents leaves them unwritten.

// Kinds of account_activity rows.
const (
	ActivityTxSigner   = "tx_signer"   // signed a transaction (ref 0: position names it)
	ActivityTxReceiver = "tx_receiver" // received a transaction (ref 0: position names it)
	ActivityReceipt    = "receipt"     // received an action receipt (ref 0: position names it)
	ActivityFT         = "ft"          // a row of ft_events (ref, position: its outcome's and event's places)
	ActivityNFT        = "nft"         // a row of nft_events
	ActivityMT         = "mt"          // a row of mt_events
	ActivityBalance    = "balance"     // the account changed in the block (ref 0, position 0): account_history
)

// NotifyChannel is the PostgreSQL channel every commit notifies, with
// {"height": H, "hash": "...", "first_height": L, "cursor": NAME}: the new
// position of cursor NAME and the first block of the batch.
const NotifyChannel = "nearline_blocks"

// explorerRows are the explorer tables' rows of a batch.
type explorerRows struct {
	ftEvents            []ftEventRow
	nftEvents, mtEvents []tokenEventRow
	activity            []activityRow
	// balances are the balance activity of the batch's account history
	// rows, added to activity after the token events.
	balances []activityRow
	// malformed are the event logs skipped, for the log and CommitStats.
	malformed []malformedLog
	// outcomes are the outcomes noted whose logs addEvents has not parsed
	// yet.
	outcomes []eventOutcome
	// unplaced are the token events whose place does not fit an activity
	// row's position (eventPosition): they have no activity row.
	unplaced []malformedLog
	// parsed are the outcomes whose logs were parsed, by transaction
	// height and receipt id: should a status list an outcome twice (the
	// simulator's did, before promiseID), its events count once.
	parsed map[outcomeKey]bool
}

type outcomeKey struct {
	txHeight  int64
	receiptID string
}

type malformedLog struct {
	receiptID, contractID string
	logIndex              int
	err                   error
}

// eventKeyColumns are the columns of a token event row's key: the token
// tables have no standard column (one per table: their views give it),
// hold accounts by number (migration 00018), and name their outcome by
// its place (tx_index, the status's place in its block; outcome_index,
// the outcome's in the status), their block time by block_height (00019).
func eventKeyColumns[R any](key func(r *R) *eventKey) []column[R] {
	return []column[R]{
		col("tx_block_height", func(w *copyWriter, r *R) { w.int8(key(r).txHeight) }),
		col("tx_index", func(w *copyWriter, r *R) { w.int4(key(r).txIndex) }),
		col("outcome_index", func(w *copyWriter, r *R) { w.int4(key(r).outcomeIndex) }),
		col("log_index", func(w *copyWriter, r *R) { w.int4(key(r).logIndex) }),
		col("event_index", func(w *copyWriter, r *R) { w.int4(key(r).eventIndex) }),
		col("block_height", func(w *copyWriter, r *R) { w.int8(key(r).height) }),
		accountCol("contract", func(r *R) string { return key(r).contract }),
		col("version", func(w *copyWriter, r *R) { w.text(key(r).version) }),
		col("event", func(w *copyWriter, r *R) { w.text(key(r).event) }),
		col("item_index", func(w *copyWriter, r *R) { w.int4(key(r).itemIndex) }),
	}
}

// tokenEventColumns are the columns of an NFT or MT event row; delta
// writes its delta_amount.
func tokenEventColumns(delta func(w *copyWriter, r *tokenEventRow)) []column[tokenEventRow] {
	return append(eventKeyColumns(func(r *tokenEventRow) *eventKey { return &r.key }),
		col("token_index", func(w *copyWriter, r *tokenEventRow) { w.int4(r.tokenIndex) }),
		col("token_id", func(w *copyWriter, r *tokenEventRow) { w.text(r.tokenID) }),
		accountCol("account", func(r *tokenEventRow) string { return r.account }),
		optAccountCol("other_account", func(r *tokenEventRow) *string { return r.other }),
		col("delta_amount", delta),
		col("authorized_id", func(w *copyWriter, r *tokenEventRow) { w.optText(r.authorizedID) }),
		col("memo", func(w *copyWriter, r *tokenEventRow) { w.optText(r.memo) }))
}

// explorerTables are the tables Commit writes when events are on, after
// the others.
var explorerTables = []table{
	// An outcome's events are parsed once per transaction height (parsed),
	// under the first status of the batch that lists it (the key names
	// that status's and the outcome's places); should a row come twice
	// anyway, the key keeps it once rather than stop the indexer.
	newTable(tableSpec{name: "ft_events_ids", heightColumn: "tx_block_height", conflict: "ON CONFLICT DO NOTHING"},
		func(r *rowSet) []ftEventRow { return r.ex.ftEvents },
		append(eventKeyColumns(func(r *ftEventRow) *eventKey { return &r.key }),
			accountCol("account", func(r *ftEventRow) string { return r.account }),
			optAccountCol("other_account", func(r *ftEventRow) *string { return r.other }),
			col("delta_amount", func(w *copyWriter, r *ftEventRow) { w.bigNumeric(r.amount) }),
			col("memo", func(w *copyWriter, r *ftEventRow) { w.optText(r.memo) }))...),
	newTable(tableSpec{name: "nft_events_ids", heightColumn: "tx_block_height", conflict: "ON CONFLICT DO NOTHING"},
		func(r *rowSet) []tokenEventRow { return r.ex.nftEvents },
		tokenEventColumns(func(w *copyWriter, r *tokenEventRow) { w.int2(r.nftDelta) })...),
	newTable(tableSpec{name: "mt_events_ids", heightColumn: "tx_block_height", conflict: "ON CONFLICT DO NOTHING"},
		func(r *rowSet) []tokenEventRow { return r.ex.mtEvents },
		tokenEventColumns(func(w *copyWriter, r *tokenEventRow) { w.bigNumeric(r.amount) })...),
	newTable(tableSpec{name: "account_activity_ids", heightColumn: activitySourceHeight, conflict: "ON CONFLICT DO NOTHING"},
		func(r *rowSet) []activityRow { return r.ex.activity },
		accountCol("account", func(r *activityRow) string { return r.account }),
		col("block_height", func(w *copyWriter, r *activityRow) { w.int8(r.height) }),
		col("kind", func(w *copyWriter, r *activityRow) { w.text(r.kind) }),
		col("ref", func(w *copyWriter, r *activityRow) { w.int4(r.ref) }),
		col("position", func(w *copyWriter, r *activityRow) { w.int8(r.position) }),
		optAccountCol("other_account", func(r *activityRow) *string { return r.other }),
		optAccountCol("contract", func(r *activityRow) *string { return r.contract }),
		col("amount", func(w *copyWriter, r *activityRow) { w.bigNumeric(r.amount) })),
}

// The explorer tables' rows.
type (
	// eventKey is what names a token event row.
	eventKey struct {
		txHeight, height                                       int64
		txIndex, outcomeIndex, logIndex, eventIndex, itemIndex int32
		contract, version, event                               string
	}
	ftEventRow struct {
		key     eventKey
		account string
		other   *string
		amount  bigNumeric
		memo    *string
	}
	// tokenEventRow is an NFT event's (nftDelta, 1 or -1) or an MT
	// event's (amount).
	tokenEventRow struct {
		key                eventKey
		tokenIndex         int32
		tokenID, account   string
		other              *string
		nftDelta           int16
		amount             bigNumeric
		authorizedID, memo *string
	}
	activityRow struct {
		account         string
		height          int64
		kind            string
		ref             int32
		position        int64
		other, contract *string
		amount          bigNumeric
	}
)

// activityPosition orders a chunk's transactions and receipts within a
// block.
func activityPosition(shard int32, index int) int64 { return int64(shard)<<32 | int64(index) }

// Token event activity rows name their event by place (migration 00021):
// ref is the status's index_in_block in the transaction's block, and
// position packs the blocks from the transaction to the
// execution (delay), the outcome's place in the status, the log's place in
// the outcome and the event's among the log's rows, each in a field of
// its own: the primary key stays unique (two transactions of different
// blocks may have the same index) in 8 bytes. The limits are far above
// the protocol's: 100 logs an outcome, 16 KiB of logs (fewer than 2¹³
// rows), outcomes bounded by a transaction's gas.
const (
	eventDelayShift   = 40 // 23 bits: up to ~8.4 million blocks late
	eventOutcomeShift = 24 // 16 bits
	eventLogShift     = 16 // 8 bits
	eventIndexBits    = 16
)

// activitySourceHeight is the block whose commit wrote an activity row
// (a token row's transaction's: its block_height less its delay), which a
// rewrite of a range deletes by (a BRIN index on it, migration 00021).
const activitySourceHeight = `(CASE WHEN kind IN ('ft', 'nft', 'mt') THEN block_height - (position >> 40) ELSE block_height END)`

// errEventPlace says a token event's place does not fit an activity row.
var errEventPlace = errors.New("event place out of the activity position's range")

// eventPosition is the activity position of the event at index of the log
// at logIndex of the outcome at outcome of its status, executed delay
// blocks after its transaction.
func eventPosition(delay int64, outcome int32, logIndex, index int) (int64, error) {
	if delay < 0 || delay >= 1<<(63-eventDelayShift) || outcome < 0 || outcome >= 1<<(eventDelayShift-eventOutcomeShift) ||
		logIndex >= 1<<(eventOutcomeShift-eventLogShift) || index >= 1<<eventIndexBits {
		return 0, fmt.Errorf("%w: delay %d, outcome %d, log %d, event %d", errEventPlace, delay, outcome, logIndex, index)
	}
	return delay<<eventDelayShift | int64(outcome)<<eventOutcomeShift | int64(logIndex)<<eventLogShift | int64(index), nil
}

// addActivity records a bundle's transactions for their signer and their
// receiver, and its action receipts for their receiver. Their ref is 0
// (migration 00015 made it ” and 00021 an integer): the block height and
// position name the transactions or receipts row that holds the hash.
func (r *rowSet) addActivity(b *bundle.Bundle) {
	if !r.events {
		return
	}
	height := int64(b.Height())
	// The rows point at the names in the bundle's views (which outlive
	// them), not in copies of the views made to range over them.
	for ci := range b.Chunks {
		v := &b.Chunks[ci].View
		shard := int32(v.Header.ShardID)
		for i := range v.Transactions {
			tx, pos := &v.Transactions[i], activityPosition(shard, i)
			r.ex.activity = append(r.ex.activity,
				activityRow{account: tx.SignerID, height: height, kind: ActivityTxSigner, position: pos, other: &tx.ReceiverID},
				activityRow{account: tx.ReceiverID, height: height, kind: ActivityTxReceiver, position: pos, other: &tx.SignerID})
		}
		for i := range v.Receipts {
			if rc := &v.Receipts[i]; rc.Receipt.Action != nil {
				r.ex.activity = append(r.ex.activity, activityRow{account: rc.ReceiverID, height: height, kind: ActivityReceipt,
					position: activityPosition(shard, i), other: &rc.PredecessorID})
			}
		}
	}
}

// eventOutcome is the receipt outcome at index of the status at txIndex of
// the block at txHeight, executed at height, whose logs may hold events.
type eventOutcome struct {
	txHeight, height int64
	txIndex, index   int32
	o                *bundle.OutcomeFields
}

// noteOutcome keeps an outcome whose logs may hold token events for
// addEvents.
func (r *rowSet) noteOutcome(txHeight, height int64, txIndex, index int32, o *bundle.OutcomeFields) {
	if r.events && len(o.Outcome.Logs) > 0 && bytes.Contains(o.Outcome.Logs, []byte(events.Prefix)) {
		r.ex.outcomes = append(r.ex.outcomes, eventOutcome{txHeight, height, txIndex, index, o})
	}
}

// addEvents parses the token events of the outcomes noted since the last
// call, in order.
func (r *rowSet) addEvents() {
	for _, e := range r.ex.outcomes {
		r.addOutcomeEvents(e.txHeight, e.height, e.txIndex, e.index, e.o)
	}
	r.ex.outcomes = r.ex.outcomes[:0]
}

// addOutcomeEvents parses the token events of the receipt outcome at index
// of the status at txIndex of the block at txHeight, executed at height.
func (r *rowSet) addOutcomeEvents(txHeight, height int64, txIndex, index int32, o *bundle.OutcomeFields) {
	if !succeeded(o.Outcome.Status) {
		return
	}
	key := outcomeKey{txHeight, o.ID}
	if r.ex.parsed[key] {
		return
	}
	if r.ex.parsed == nil {
		r.ex.parsed = map[outcomeKey]bool{}
	}
	r.ex.parsed[key] = true
	if !mayHoldEvents(o.Outcome.Logs) {
		return
	}
	logs, err := jsonobject.Strings(o.Outcome.Logs)
	if err != nil {
		r.ex.malformed = append(r.ex.malformed, malformedLog{receiptID: o.ID, contractID: o.Outcome.ExecutorID, logIndex: -1, err: err})
		return
	}
	contract := o.Outcome.ExecutorID
	for li, log := range logs {
		evs, err := events.Parse(log)
		if err != nil {
			r.ex.malformed = append(r.ex.malformed, malformedLog{receiptID: o.ID, contractID: o.Outcome.ExecutorID, logIndex: li, err: err})
			continue
		}
		for k := range evs {
			e := &evs[k] // the rows point at its other account
			key := eventKey{txHeight: txHeight, txIndex: txIndex, outcomeIndex: index, logIndex: int32(li),
				eventIndex: int32(e.Index), height: height, contract: contract, version: e.Version, event: e.Event,
				itemIndex: int32(e.ItemIndex)}
			var other *string
			if e.OtherAccountID != "" {
				other = &e.OtherAccountID
			}
			kind := ActivityFT
			amount := numericOfBig(e.Delta)
			switch e.Standard {
			case events.NEP141:
				r.ex.ftEvents = append(r.ex.ftEvents, ftEventRow{key: key, account: e.AccountID, other: other, amount: amount, memo: e.Memo})
			case events.NEP171:
				kind = ActivityNFT
				r.ex.nftEvents = append(r.ex.nftEvents, tokenEventRow{key: key, tokenIndex: int32(e.TokenIndex), tokenID: e.TokenID,
					account: e.AccountID, other: other, nftDelta: int16(e.Delta.Int64()), authorizedID: e.AuthorizedID, memo: e.Memo})
			case events.NEP245:
				kind = ActivityMT
				r.ex.mtEvents = append(r.ex.mtEvents, tokenEventRow{key: key, tokenIndex: int32(e.TokenIndex), tokenID: e.TokenID,
					account: e.AccountID, other: other, amount: amount, authorizedID: e.AuthorizedID, memo: e.Memo})
			}
			pos, err := eventPosition(height-txHeight, index, li, e.Index)
			if err != nil {
				r.ex.unplaced = append(r.ex.unplaced, malformedLog{receiptID: o.ID, contractID: o.Outcome.ExecutorID, logIndex: li, err: err})
				continue
			}
			r.ex.activity = append(r.ex.activity, activityRow{account: e.AccountID, height: height, kind: kind, ref: txIndex,
				position: pos, other: other, contract: &contract, amount: amount})
		}
	}
}

// succeeded reports whether an outcome status is a success (NEP-297: only
// the events of successful executions count).
// mayHoldEvents reports whether an outcome's logs may hold an event: false
// only for an array of strings none of which can begin with events.Prefix,
// its bytes nowhere holding the prefix nor a \u escape (which could spell
// it), told without decoding them. Any other logs are decoded, for their
// events or for their error.
func mayHoldEvents(logs json.RawMessage) bool {
	if bytes.Contains(logs, []byte(events.Prefix)) || bytes.Contains(logs, []byte(`\u`)) {
		return true
	}
	end, err := jsonobject.ScanArray(logs, 0, func(at int) (int, error) {
		if at >= len(logs) || logs[at] != '"' {
			return 0, errNotString
		}
		return jsonobject.SkipValue(logs, at)
	})
	return err != nil || jsonobject.Trailing(logs, end) != nil
}

var errNotString = errors.New("not a string")

func succeeded(status json.RawMessage) bool {
	var s struct {
		SuccessValue     *json.RawMessage `json:"SuccessValue"`
		SuccessReceiptID *string          `json:"SuccessReceiptId"`
	}
	if json.Unmarshal(status, &s) != nil {
		return false
	}
	return s.SuccessValue != nil || s.SuccessReceiptID != nil
}

// finishExplorer adds the token events of the batch's outcomes and the
// balance activity of its account history rows.
func (r *rowSet) finishExplorer() {
	if !r.events {
		return
	}
	r.addEvents()
	r.ex.activity = append(r.ex.activity, r.ex.balances...)
	r.ex.balances = nil
}

// addBalanceActivity records that an account changed at height, with its
// balance after (NULL when it was deleted); finishExplorer adds these
// rows after the token events'.
func (r *rowSet) addBalanceActivity(account string, height int64, amount numericValue) {
	if r.events {
		r.ex.balances = append(r.ex.balances, activityRow{account: account, height: height, kind: ActivityBalance,
			amount: bigNumeric{small: amount}})
	}
}

// clearTxEventsSQL deletes the token events of the status at $2 of the
// block at $1 from the table %[1]s and their activity rows (kind %[2]s),
// found by key: a newer answer may list an outcome at another place (a
// receipt's outcome before those of the receipts an earlier one made), so
// its events' activity rows would be named otherwise.
const clearTxEventsSQL = `WITH gone AS (
    DELETE FROM %[1]s WHERE tx_block_height = $1 AND tx_index = $2
    RETURNING account, block_height, outcome_index, log_index, event_index)
DELETE FROM account_activity_ids a USING gone g
WHERE a.account = g.account AND a.block_height = g.block_height AND a.kind = '%[2]s' AND a.ref = $2
  AND a.position = ((g.block_height - $1) << 40) | (g.outcome_index::bigint << 24) | (g.log_index::bigint << 16)
      | g.event_index`

// replaceTxEvents replaces the token events of the status at txIndex of
// the block at txHeight (a newer answer lists more outcomes) and their
// activity; ids hold the numbers of the rows' accounts.
func replaceTxEvents(ctx context.Context, tx pgx.Tx, txHeight int64, txIndex int32, rows *rowSet, ids accountIDs) error {
	kinds := map[string]string{"ft_events_ids": ActivityFT, "nft_events_ids": ActivityNFT, "mt_events_ids": ActivityMT}
	for _, t := range explorerTables {
		name := t.spec().name
		if kind, ok := kinds[name]; ok {
			if _, err := tx.Exec(ctx, fmt.Sprintf(clearTxEventsSQL, name, kind), txHeight, txIndex); err != nil {
				return fmt.Errorf("clear %s of status %d of block %d: %w", name, txIndex, txHeight, err)
			}
		}
		if _, err := copyRows(ctx, tx, t, rows, ids); err != nil {
			return err
		}
	}
	return nil
}

// notifyCommit tells listeners of NotifyChannel that the batch first..c
// committed (a notification is delivered only if its transaction commits).
func notifyCommit(ctx context.Context, tx pgx.Tx, cursor string, first int64, c bundle.Cursor) error {
	payload, err := json.Marshal(struct {
		Height      uint64 `json:"height"`
		Hash        string `json:"hash"`
		FirstHeight int64  `json:"first_height"`
		Cursor      string `json:"cursor"`
	}{c.Height, c.Hash, first, cursor})
	if err != nil {
		return fmt.Errorf("encode notification: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, string(payload)); err != nil {
		return fmt.Errorf("notify %s: %w", NotifyChannel, err)
	}
	return nil
}

// logMalformed logs each event log skipped as malformed and each token
// event left without an activity row.
func (s *Store) logMalformed(ex *explorerRows) {
	for _, m := range ex.malformed {
		s.logger.Warn("malformed event log skipped", "receipt_id", m.receiptID, "contract_id", m.contractID,
			"log_index", m.logIndex, "error", m.err)
	}
	for _, m := range ex.unplaced {
		s.logger.Warn("token event has no activity row", "receipt_id", m.receiptID, "contract_id", m.contractID,
			"log_index", m.logIndex, "error", m.err)
	}
}
