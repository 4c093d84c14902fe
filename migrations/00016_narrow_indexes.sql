-- +goose Up
-- Layout 3, sixth step (docs/database-layout3.md): indexes sized to the
-- queries they serve, measured on real mainnet blocks.
--
-- Receipts and transactions by hash are looked up by equality only: a hash
-- index keeps a 4-byte hash code a row instead of the 44-character text
-- (receipts 30 -> 13 KiB a mainnet block, built whole) and inserts without
-- comparing strings.
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
