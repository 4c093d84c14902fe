package sim

// Protocol 86, mainnet as it is since August 2026 (nearcore 2.13), where
// it matters to an archive:
//   - Ten shards with ids 10, 11, 1, 8, 9, 6, 7, 4, 12, 13: the version-1
//     layout of six shards split four times into new ids (3 → 6, 7 at
//     protocol 75; 2 → 8, 9 at 76; 0 → 10, 11 at 78; 5 → 12, 13), as
//     Protocol86Config builds it.
//   - Receipt outcomes carry ExecutionMetadata V4 from protocol 85 on
//     (nearcore's ExecutionMetadataV4 feature): {"version":4,...}; the
//     per-action contracts V4 adds are not modelled (the archive keeps
//     metadata as served, whatever it holds).
//   - Instant receipts: a receipt nearcore's Receipt::is_instant_receipt
//     accepts (a PromiseYield receipt; an action receipt of one
//     DeleteAccount action and no input data) is processed right after
//     the receipt that made it, in the same chunk, never sent out. The
//     simulator makes the PromiseYield ones (its contracts make no
//     DeleteAccount promise). From protocol 86 a document's chunk lists
//     them in instant_receipts, as near-indexer-primitives'
//     IndexerChunkView of nearcore 2.13 does (the receipts whose
//     ProcessedReceipt source is Instant); a document of an earlier
//     protocol has no such member. A PromiseYield receipt has no outcome
//     where it is processed (it waits, postponed, for its data): its
//     outcome comes in the block that resumes it, in that shard's
//     receipt_execution_outcomes, with the receipt, like any other.

const (
	protocolMetadataV4      uint32 = 85
	protocolInstantReceipts uint32 = 86
)

// receiptMetadata is the metadata of a receipt's execution outcome under
// protocol: ExecutionMetadataView as nearcore 2.x serves it.
func receiptMetadata(protocol uint32) string {
	if protocol >= protocolMetadataV4 {
		return `{"version":4,"gas_profile":[]}`
	}
	return `{"version":3,"gas_profile":[]}`
}

// Protocol86Config returns a chain that runs into protocol 86 as mainnet
// did: six shards at protocol 82 under a version-1 layout, split at
// epoch starts at the heights of ReshardAt into mainnet's ten shard ids
// (10, 11, 1, 8, 9, 6, 7, 4, 12, 13) by maxHeight, with yields (instant
// receipts) among the transactions, skipped heights and missing chunks.
// Epochs are 20 heights; maxHeight is at least 120.
func Protocol86Config(seed, maxHeight uint64) Config {
	return Config{
		Seed: seed, Shards: 6, ProtocolVersion: 82, EpochLength: 20,
		ReshardAt:   []uint64{20, 40, 60, 80},
		SplitShards: []uint64{3, 2, 0, 5},
		TxsPerBlock: 10, SkipRate: 0.05, MissingChunkRate: 0.1,
		MaxHeight: max(maxHeight, 120),
	}
}
