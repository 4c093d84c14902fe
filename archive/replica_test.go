package archive

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/rpctest"
	"github.com/nearline/nearline/rpcserve"
)

// replicaStore is the seeded archive read as if from a streaming replica
// whose replay trails its primary by lag (or failing with err).
type replicaStore struct {
	Store
	lag time.Duration
	err error
}

func (s *replicaStore) ReplicaLag(context.Context) (time.Duration, bool, error) {
	if s.err != nil {
		return 0, false, s.err
	}
	return s.lag, true, nil
}

// syncInfo returns status's sync_info as raw members.
func syncInfo(t *testing.T, res json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var view struct {
		SyncInfo map[string]json.RawMessage `json:"sync_info"`
	}
	require.NoError(t, json.Unmarshal(res, &view), string(res))
	return view.SyncInfo
}

// nearcoreSyncInfo are the members of nearcore's sync_info.
var nearcoreSyncInfo = []string{"earliest_block_hash", "earliest_block_height", "earliest_block_time", "epoch_id",
	"epoch_start_height", "latest_block_hash", "latest_block_height", "latest_block_time", "latest_state_root", "syncing"}

// TestStatusHasReplicaLagOnlyOnAReplica: on a primary, status's sync_info
// has exactly nearcore's members; on a replica it has replica_lag_seconds
// besides (the lag in seconds, to the millisecond), and the others are the
// primary's.
func TestStatusHasReplicaLagOnlyOnAReplica(t *testing.T) {
	t.Parallel()
	st := seedStore(t)
	primary := syncInfo(t, okResult(t, archiveHandler(t, st, rpcserve.Config{}, Config{}), "status", nil, nil))
	require.Equal(t, nearcoreSyncInfo, slices.Sorted(maps.Keys(primary)))

	replica := syncInfo(t, okResult(t, archiveHandler(t, &replicaStore{Store: st, lag: 1500*time.Millisecond + 400*time.Microsecond},
		rpcserve.Config{}, Config{}), "status", nil, nil))
	require.Equal(t, "1.5", string(replica["replica_lag_seconds"]))
	delete(replica, "replica_lag_seconds")
	require.Equal(t, primary, replica)
}

// TestHealthFailsWhenTheReplicaIsBehind: with --health-max-lag, health
// fails with NO_NEW_BLOCKS naming the replica when the replica's lag
// exceeds it (and status says syncing), and passes when it does not; with
// the check off, any lag is healthy. (The seeded blocks are from 2023, so
// the allowed lag is a century to keep their age out of it.)
func TestHealthFailsWhenTheReplicaIsBehind(t *testing.T) {
	t.Parallel()
	st := seedStore(t)
	const century = 100 * 365 * 24 * time.Hour
	within := archiveHandler(t, &replicaStore{Store: st, lag: century - time.Hour}, rpcserve.Config{}, Config{HealthMaxLag: century})
	res, rerr := rpctest.Call(t, within, "health", nil)
	require.Nil(t, rerr)
	require.Equal(t, "null", string(res))
	require.Equal(t, "false", string(syncInfo(t, okResult(t, within, "status", nil, nil))["syncing"]))

	behind := archiveHandler(t, &replicaStore{Store: st, lag: century + time.Hour}, rpcserve.Config{}, Config{HealthMaxLag: century})
	e := errCause(t, behind, "health", nil)
	require.Equal(t, "NO_NEW_BLOCKS", e.CauseName())
	require.Contains(t, string(e.Data), "The database replica is")
	require.Contains(t, string(e.Data), "behind its primary")
	var info struct {
		Elapsed struct{ Secs uint64 } `json:"elapsed"`
	}
	require.NoError(t, json.Unmarshal(e.Cause.Info, &info))
	require.Equal(t, uint64((century + time.Hour).Seconds()), info.Elapsed.Secs)
	require.Equal(t, "true", string(syncInfo(t, okResult(t, behind, "status", nil, nil))["syncing"]))

	off := archiveHandler(t, &replicaStore{Store: st, lag: century + time.Hour}, rpcserve.Config{}, Config{})
	res, rerr = rpctest.Call(t, off, "health", nil)
	require.Nil(t, rerr)
	require.Equal(t, "null", string(res))
}

// gather collects c's samples of nearline_replica_lag_seconds through a
// pedantic registry (which checks the collector's descriptions too).
func gather(t *testing.T, c prometheus.Collector) []float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	families, err := reg.Gather()
	require.NoError(t, err)
	var values []float64
	for _, f := range families {
		require.Equal(t, "nearline_replica_lag_seconds", f.GetName())
		for _, m := range f.GetMetric() {
			values = append(values, m.GetGauge().GetValue())
		}
	}
	return values
}

// TestReplicaLagMetric: nearline_replica_lag_seconds is the lag on a
// replica, and has no sample on a primary or when the read fails.
func TestReplicaLagMetric(t *testing.T) {
	t.Parallel()
	st := seedStore(t)
	require.Equal(t, []float64{2.5}, gather(t, NewReplicaLagCollector(&replicaStore{Store: st, lag: 2500 * time.Millisecond}, time.Second, nil)))
	require.Empty(t, gather(t, NewReplicaLagCollector(st, time.Second, nil)), "primary")
	require.Empty(t, gather(t, NewReplicaLagCollector(&replicaStore{Store: st, err: errors.New("connection refused")}, time.Second, nil)), "failing read")
}
