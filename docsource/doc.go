// Package docsource is the indexer.Source of block documents: Source
// reads one document per height through a Fetcher (NeardataFetcher: GET
// /v0/block/{height}; LakeFetcher: {height:012}/block.json and
// shard_{id}.json from a directory or over HTTP, both with upstream.Getter's
// retries, Retry-After and failover) and builds the Bundle the JSON-RPC
// source (rpcsource.Source) would fetch for the same chain, byte for byte
// (TestDocumentSourcesBuildTheRPCSourcesBundles):
//   - chunk answers follow nearcore's ChunkView (docparse.go): the
//     documents' chunks with each transaction without its outcome and
//     without the indexer's own members (local_receipts,
//     instant_receipts), ChunkView's members in its order, any other
//     member kept in place;
//   - effects and changes are the shards' state changes sorted by nearcore
//     trie key (stable: a key's changes keep their order), grouped as
//     rpcsource.Source's EXPERIMENTAL_changes calls return them;
//   - a transaction's status is assembled depth first from its outcome and
//     its receipts' outcomes, read from the documents of the blocks after
//     it (up to TxLookahead, never past the final head, ReadAhead of them
//     at once); each document is fetched once and cached until the Bundle
//     of its own height and of every height below it have returned, so
//     reading ahead costs no extra request, whatever order the workers run
//     in. Incomplete at the head, a status waits while the head grows
//     (TxStallWait), then is stored as not FINAL and revisited like
//     rpcsource.Source's; what was found of it is kept, so a revisit reads only
//     the documents after those it read (after a restart, from its block
//     again, up to RevisitLookahead);
//   - a height is skipped when neardata answers null, or, for a document
//     that is missing, when a later block links over it; otherwise the
//     upstream is behind and asked again.
//
// Configs come from an RPC upstream (genesis once, protocol config once
// per epoch, claimed before it is fetched) or, without one, the genesis
// config from Config.Genesis and none per epoch.
package docsource
