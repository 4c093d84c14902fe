-- +goose Up
-- Layout 3, fifth step (docs/database-layout3.md): an account_activity row
-- of a transaction or a receipt keeps its reference as its place, not its
-- hash. Its position (shard × 2³² + index in chunk) at its block_height
-- names the transactions or receipts row, which holds the hash: ref_id is
-- '' for kinds tx_signer, tx_receiver and receipt, as for balance, and the
-- key stays unique. A mainnet block has ~430 such rows, each carrying a
-- 44-character hash twice (the row and the primary key): ~37 KiB a block.
-- Token event rows keep their receipt id (their position is the log's and
-- event's index, not a place in a chunk). The documented page query joins
-- transactions and receipts for the hash (docs/database.md).
UPDATE account_activity SET ref_id = '' WHERE kind IN ('tx_signer', 'tx_receiver', 'receipt');

-- +goose Down
UPDATE account_activity a SET ref_id = t.hash
FROM transactions t
WHERE a.kind IN ('tx_signer', 'tx_receiver') AND a.ref_id = '' AND t.block_height = a.block_height
  AND t.shard_id = (a.position >> 32)::integer AND t.index_in_chunk = (a.position & 4294967295)::integer;
UPDATE account_activity a SET ref_id = r.receipt_id
FROM receipts r
WHERE a.kind = 'receipt' AND a.ref_id = '' AND r.block_height = a.block_height
  AND r.shard_id = (a.position >> 32)::integer AND r.index_in_chunk = (a.position & 4294967295)::integer;
