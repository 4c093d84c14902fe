package store

import (
	"context"

	"github.com/nearline/nearline/near"
)

// MigrateTo applies the embedded migrations up to version, for tests of
// upgrades from an older layout.
var MigrateTo = migrateTo

// PartitionedTables are the block-keyed tables the store creates height-range
// partitions for.
var PartitionedTables = partitionedTables

// RecordBasesSQL derives the account bases of heights $1..$2 from stored
// rows.
const RecordBasesSQL = recordBasesSQL

// GlobalContractCodeAt returns the global contract code id names as it was
// on shard after the block at height, counting only distributions to that
// shard (one window of GlobalContractCodeIn).
func (s *Store) GlobalContractCodeAt(ctx context.Context, id near.GlobalContractID, shard uint64, height uint64) ([]byte, string, error) {
	return s.GlobalContractCodeIn(ctx, id, []ShardWindow{{Target: shard, Exec: shard, To: height}})
}
