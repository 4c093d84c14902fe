package store

import (
	"context"
	"fmt"
	"time"
)

// replicaLagSQL reads whether the server is a standby and, if so, how far
// its replay trails the primary, in seconds.
//
// The lag is the standard one: 0 while the WAL receiver streams and has
// replayed everything it received, otherwise the age of the last replayed
// transaction (now() minus its commit time on the primary).
//
// A disconnected WAL receiver (primary down, network cut, replication slot
// gone) is never reported as 0, even when everything received is replayed:
// the standby cannot know what the primary wrote since, so the lag is the
// age of the last replayed transaction and grows until the receiver streams
// again. On a primary with no writes that age keeps growing too, which is
// why the streaming-and-caught-up case is 0.
//
// A role without pg_read_all_stats sees the receiver's row (its pid) but
// not its status; a running receiver then counts as streaming. Before the
// standby has replayed any transaction since it started, the age is taken
// from the server's start, the most it can be behind by what it knows.
const replicaLagSQL = `SELECT pg_is_in_recovery(),
	CASE
	  WHEN NOT pg_is_in_recovery() THEN 0
	  WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()
	   AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE coalesce(status, 'streaming') = 'streaming') THEN 0
	  ELSE greatest(0, extract(epoch FROM now() - coalesce(pg_last_xact_replay_timestamp(), pg_postmaster_start_time())))
	END::float8`

// ReplicaLag reports whether the database is a standby (in recovery) and,
// if it is, how far its replay trails the primary (see replicaLagSQL). On a
// primary it returns (0, false, nil).
func (s *Store) ReplicaLag(ctx context.Context) (lag time.Duration, replica bool, err error) {
	var seconds float64
	if err := s.pool.QueryRow(ctx, replicaLagSQL).Scan(&replica, &seconds); err != nil {
		return 0, false, fmt.Errorf("read replica lag: %w", err)
	}
	return time.Duration(seconds * float64(time.Second)), replica, nil
}
