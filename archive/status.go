package archive

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/rpcserve"
)

// genesisConfig returns the stored genesis config.
func (a *Backend) genesisConfig(ctx context.Context) (json.RawMessage, error) {
	cfg, err := a.store.GenesisConfig(ctx)
	if err != nil {
		return nil, readFailed(err, near.InternalError("The genesis config is not in the archive yet"), "read genesis config")
	}
	return cfg, nil
}

// tx returns the stored transaction status: EXPERIMENTAL_tx_status as
// stored, `tx` without its `receipts`.
func (a *Backend) tx(ctx context.Context, req near.TxRequest, withReceipts bool) (json.RawMessage, error) {
	status, err := a.store.TxStatus(ctx, req.TxHash, req.SenderAccountID, withReceipts)
	if err != nil {
		// Older than the archive, or not final yet: an upstream may know it.
		return nil, readFailed(err, near.UnknownTransaction(req.TxHash), "read transaction "+req.TxHash)
	}
	return status, nil
}

// receipt returns the stored receipt; one the archive has not seen
// (created before its first block, or in no chunk and not executed yet)
// may be known upstream.
func (a *Backend) receipt(ctx context.Context, receiptID string) (json.RawMessage, error) {
	view, err := a.store.Receipt(ctx, receiptID)
	if err != nil {
		return nil, readFailed(err, near.UnknownReceipt(receiptID), "read receipt "+receiptID)
	}
	return view, nil
}

// receiptToTx names the transaction whose stored status lists the
// receipt's outcome; a receipt no stored status lists (not executed yet, a
// data receipt, or older than the archive) may be known upstream.
func (a *Backend) receiptToTx(ctx context.Context, receiptID string) (*near.ReceiptToTxView, error) {
	txHash, signer, err := a.store.ReceiptTx(ctx, receiptID)
	if err != nil {
		return nil, readFailed(err, near.UnknownReceipt(receiptID), "read transaction of receipt "+receiptID)
	}
	return &near.ReceiptToTxView{TransactionHash: txHash, SenderAccountID: signer}, nil
}

// validators is not stored: it goes upstream.
func (a *Backend) validators(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, &rpcserve.ForwardError{Reason: rpcserve.NotServed("validators")}
}

// health reports NOT_SYNCED_YET until the first block is indexed and, with
// HealthMaxLag set, NO_NEW_BLOCKS while the database is a replica whose
// replay trails its primary by more than it (saying so), or while the
// latest block is older than it.
func (a *Backend) health(ctx context.Context) error {
	latest, _, err := a.store.LatestBlock(ctx)
	if isNotFound(err) {
		return near.NotSyncedYet()
	}
	if err != nil {
		return fmt.Errorf("read latest block: %w", err)
	}
	if a.cfg.HealthMaxLag <= 0 {
		return nil
	}
	lag, replica, err := a.store.ReplicaLag(ctx)
	if err != nil {
		return fmt.Errorf("read replica lag: %w", err)
	}
	if a.replicaBehind(lag, replica) {
		return noNewBlocks(lag, fmt.Sprintf("The database replica is %s behind its primary (replay lag; at most %s allowed)",
			lag.Round(time.Millisecond), a.cfg.HealthMaxLag))
	}
	head, err := a.header(ctx, latest)
	if err != nil {
		return err
	}
	if !a.lagging(head) {
		return nil
	}
	lag = time.Since(time.Unix(0, int64(head.Timestamp)))
	return noNewBlocks(lag, fmt.Sprintf("No blocks for %s", lag.Round(time.Millisecond)))
}

// noNewBlocks is nearcore's NO_NEW_BLOCKS error: elapsed as its info, text
// as its data.
func noNewBlocks(elapsed time.Duration, text string) error {
	secs := uint64(elapsed / time.Second)
	nanos := uint64(elapsed % time.Second)
	return near.HandlerError("NO_NEW_BLOCKS", map[string]any{"elapsed": map[string]uint64{"secs": secs, "nanos": nanos}}, text)
}

// lagging reports whether head is older than HealthMaxLag (never when the
// check is off).
func (a *Backend) lagging(head blockHeader) bool {
	return a.cfg.HealthMaxLag > 0 && time.Since(time.Unix(0, int64(head.Timestamp))) > a.cfg.HealthMaxLag
}

// replicaBehind reports whether a replica's lag exceeds HealthMaxLag
// (never when the check is off).
func (a *Backend) replicaBehind(lag time.Duration, replica bool) bool {
	return a.cfg.HealthMaxLag > 0 && replica && lag > a.cfg.HealthMaxLag
}

// status reports the archive in nearcore's status shape: the latest and
// earliest indexed blocks; syncing while nothing is indexed yet or, with
// HealthMaxLag set, while the latest block is older than it or the replica
// the archive is read from trails its primary by more than it. On a
// replica, sync_info has one member nearcore's has not,
// replica_lag_seconds: the replay lag (store.ReplicaLag), in seconds to
// the millisecond. On a primary it is left out.
func (a *Backend) status(ctx context.Context) (json.RawMessage, error) {
	lag, replica, err := a.store.ReplicaLag(ctx)
	if err != nil {
		return nil, fmt.Errorf("read replica lag: %w", err)
	}
	var lagSeconds *float64
	if replica {
		s := math.Round(lag.Seconds()*1000) / 1000
		lagSeconds = &s
	}
	view := near.StatusView{
		Version:       near.NodeVersion{Version: a.cfg.Version, Build: a.cfg.Version, Commit: a.cfg.Commit, RustcVersion: ""},
		Validators:    []near.ValidatorInfoView{},
		NodePublicKey: "ed25519:11111111111111111111111111111111",
		UptimeSec:     int64(time.Since(a.started).Seconds()),
		SyncInfo:      near.StatusSyncInfo{Syncing: true, ReplicaLagSeconds: lagSeconds},
	}
	if a.cfg.RPCAddr != "" {
		addr := a.cfg.RPCAddr
		view.RPCAddr = &addr
	}
	var genesisHeight *uint64
	if raw, err := a.store.GenesisConfig(ctx); err == nil {
		var g struct {
			ChainID         string `json:"chain_id"`
			ProtocolVersion uint32 `json:"protocol_version"`
			GenesisHeight   uint64 `json:"genesis_height"`
		}
		if err := json.Unmarshal(raw, &g); err != nil {
			return nil, fmt.Errorf("decode genesis config: %w", err)
		}
		view.ChainID, view.ProtocolVersion, view.LatestProtocolVersion = g.ChainID, g.ProtocolVersion, g.ProtocolVersion
		genesisHeight = &g.GenesisHeight
		if stamp, err := a.store.BlockStamp(ctx, near.HeightID(g.GenesisHeight)); err == nil {
			view.GenesisHash = stamp.BlockHash
		}
	} else if !isNotFound(err) {
		return nil, fmt.Errorf("read genesis config: %w", err)
	}

	latest, _, err := a.store.LatestBlock(ctx)
	if isNotFound(err) {
		return json.Marshal(view)
	}
	if err != nil {
		return nil, fmt.Errorf("read latest block: %w", err)
	}
	head, err := a.header(ctx, latest)
	if err != nil {
		return nil, err
	}
	earliest, _, err := a.store.EarliestBlock(ctx)
	if err != nil {
		return nil, fmt.Errorf("read earliest block: %w", err)
	}
	first, err := a.header(ctx, earliest)
	if err != nil {
		return nil, err
	}
	epochStart, err := a.epochStart(ctx, head, genesisHeight)
	if err != nil {
		return nil, err
	}
	view.ProtocolVersion, view.LatestProtocolVersion = head.LatestProtocolVersion, head.LatestProtocolVersion
	epochID := head.EpochID
	earliestTime := headerTime(first)
	view.SyncInfo = near.StatusSyncInfo{
		LatestBlockHash:     head.Hash,
		LatestBlockHeight:   head.Height,
		LatestStateRoot:     head.PrevStateRoot,
		LatestBlockTime:     headerTime(head),
		Syncing:             a.lagging(head) || a.replicaBehind(lag, replica),
		EarliestBlockHash:   &first.Hash,
		EarliestBlockHeight: &first.Height,
		EarliestBlockTime:   &earliestTime,
		EpochID:             &epochID,
		EpochStartHeight:    epochStart,
		ReplicaLagSeconds:   lagSeconds,
	}
	return json.Marshal(view)
}

// headerTime formats a header's timestamp as nearcore's status does:
// RFC 3339 in UTC with 0, 3, 6 or 9 fractional digits, the fewest that
// keep the value (chrono's AutoSi).
func headerTime(h blockHeader) string {
	ns := h.Timestamp
	if h.TimestampNanosec != "" {
		if v, err := strconv.ParseUint(h.TimestampNanosec, 10, 64); err == nil {
			ns = v
		}
	}
	t := time.Unix(0, int64(ns)).UTC()
	layout := "2006-01-02T15:04:05.000000000Z"
	switch frac := t.Nanosecond(); {
	case frac == 0:
		layout = "2006-01-02T15:04:05Z"
	case frac%1_000_000 == 0:
		layout = "2006-01-02T15:04:05.000Z"
	case frac%1_000 == 0:
		layout = "2006-01-02T15:04:05.000000Z"
	}
	return t.Format(layout)
}
