package store

// MigrateTo applies the embedded migrations up to version, for tests of
// upgrades from an older layout.
var MigrateTo = migrateTo

// PartitionedTables are the block-keyed tables the store creates height-range
// partitions for.
var PartitionedTables = partitionedTables

// RecordBasesSQL derives the account bases of heights $1..$2 from stored
// rows.
const RecordBasesSQL = recordBasesSQL
