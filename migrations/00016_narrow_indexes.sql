-- +goose Up
-- Layout 3, sixth step (docs/database-layout3.md): indexes sized to the
-- queries they serve, measured on real mainnet blocks.
--
-- account_activity: its primary key repeated every column of the page key
-- (~120 bytes a row, 73 KiB a mainnet block). An account's page is found
-- by (account_id, block_height) alone; the rows of one account at one
-- height are few and sorted after the scan (Incremental Sort), and B-tree
-- deduplication keeps an account's rows of one block as one entry (a
-- relayer has a hundred a block): ~20 KiB a block. The rows of
-- transactions, receipts and balances are unique by construction (a place
-- in a committed block, one balance an account a block); token event rows
-- (ref_id, the receipt id, is not '') keep a unique key, which the commit's
-- ON CONFLICT needs when a rewritten status lists its events again.
ALTER TABLE account_activity DROP CONSTRAINT account_activity_pkey;
CREATE INDEX account_activity_account_idx ON account_activity (account_id, block_height);
CREATE UNIQUE INDEX account_activity_event_key ON account_activity (account_id, block_height, kind, ref_id, position)
    WHERE ref_id <> '';
-- Without a primary key, a logical replica (Citus' shard moves) finds a
-- deleted row by all its columns.
ALTER TABLE account_activity REPLICA IDENTITY FULL;

-- Token events by account: (account_id, block_height), deduplicated, as
-- above; the rest of the page key is sorted after the scan.
DROP INDEX ft_events_account_idx;
CREATE INDEX ft_events_account_idx ON ft_events (account_id, block_height);
DROP INDEX nft_events_account_idx;
CREATE INDEX nft_events_account_idx ON nft_events (account_id, block_height);
DROP INDEX mt_events_account_idx;
CREATE INDEX mt_events_account_idx ON mt_events (account_id, block_height);

-- Receipts and transactions by hash are looked up by equality only: a hash
-- index keeps a 4-byte hash code a row instead of the 44-character text
-- (receipts 30 -> 13 KiB a mainnet block) and inserts without comparing
-- strings.
DROP INDEX receipts_receipt_id_idx;
CREATE INDEX receipts_receipt_id_idx ON receipts USING hash (receipt_id);
DROP INDEX transactions_hash_idx;
CREATE INDEX transactions_hash_idx ON transactions USING hash (hash);

-- No query reads outcomes by the height they executed at.
DROP INDEX execution_outcomes_block_height_idx;

-- +goose Down
CREATE INDEX execution_outcomes_block_height_idx ON execution_outcomes USING brin (block_height);
DROP INDEX transactions_hash_idx;
CREATE INDEX transactions_hash_idx ON transactions (hash);
DROP INDEX receipts_receipt_id_idx;
CREATE INDEX receipts_receipt_id_idx ON receipts (receipt_id);
DROP INDEX mt_events_account_idx;
CREATE INDEX mt_events_account_idx ON mt_events (account_id, block_height, receipt_id, log_index, event_index);
DROP INDEX nft_events_account_idx;
CREATE INDEX nft_events_account_idx ON nft_events (account_id, block_height, receipt_id, log_index, event_index);
DROP INDEX ft_events_account_idx;
CREATE INDEX ft_events_account_idx ON ft_events (account_id, block_height, receipt_id, log_index, event_index);
DROP INDEX account_activity_event_key;
DROP INDEX account_activity_account_idx;
ALTER TABLE account_activity REPLICA IDENTITY DEFAULT;
ALTER TABLE account_activity ADD PRIMARY KEY (account_id, block_height, kind, ref_id, position);
