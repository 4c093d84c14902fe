-- +goose Up
-- Layout 2: what is served verbatim and was stored once per row, uncompressed
-- (rows under ~2 KB are never TOAST-compressed), is kept once per block in a
-- packed document (internal/packed: a format byte, then zstd of the values
-- back to back); typed columns stay for SQL. Keys that named a chunk by its
-- 44-character hash name it by (block_height, shard_id), and the height
-- indexes of append-only tables are BRIN.
--
-- An archive written with layout 1 is converted in place: its documents are
-- written in format 0 (a JSON array, compressed by TOAST), which the store
-- reads as well; blocks indexed from then on get zstd documents.

-- A block's state changes, in upstream order: state_changes.index_in_block
-- is the position in the document.
CREATE TABLE block_changes (
    block_height    bigint PRIMARY KEY,
    changes         bytea NOT NULL
);
INSERT INTO block_changes (block_height, changes)
SELECT block_height, '\x00'::bytea || convert_to('[' || string_agg(view::text, ',' ORDER BY index_in_block) || ']', 'UTF8')
FROM state_changes GROUP BY block_height;
ALTER TABLE state_changes DROP COLUMN view;
-- No query of the archive or the README looks changes up by their cause.
DROP INDEX state_changes_cause_tx_idx, state_changes_cause_receipt_idx;

-- A block's EXPERIMENTAL_tx_status results (of the transactions its new
-- chunks carry); transaction_statuses.index_in_block is the position. The
-- execution outcomes, served inside the statuses, are no longer kept a
-- second time in execution_outcomes.
ALTER TABLE transaction_statuses ADD COLUMN index_in_block integer;
UPDATE transaction_statuses s SET index_in_block = n.i
FROM (SELECT tx_hash, signer_id,
             (row_number() OVER (PARTITION BY block_height ORDER BY tx_hash, signer_id) - 1)::integer AS i
      FROM transaction_statuses) n
WHERE n.tx_hash = s.tx_hash AND n.signer_id = s.signer_id;
CREATE TABLE block_tx_statuses (
    block_height    bigint PRIMARY KEY,
    statuses        bytea NOT NULL
);
INSERT INTO block_tx_statuses (block_height, statuses)
SELECT block_height, '\x00'::bytea || convert_to('[' || string_agg(view::text, ',' ORDER BY index_in_block) || ']', 'UTF8')
FROM transaction_statuses GROUP BY block_height;
ALTER TABLE transaction_statuses DROP COLUMN view, ALTER COLUMN index_in_block SET NOT NULL;
-- block_height names the outcome's block (its hash was a second copy), and
-- the primary key with it (dropped with block_hash).
ALTER TABLE execution_outcomes DROP COLUMN view, DROP COLUMN block_hash;
ALTER TABLE execution_outcomes ADD PRIMARY KEY (id, block_height);

-- An action's detail only when its typed columns do not hold all of it
-- (AddKey's permission, UseGlobalContractByAccountId, kinds Nearline does
-- not model); a deployed contract's code by its hash (the code is in
-- contract_codes). Deploy actions indexed before layout 2 keep their detail
-- and have no code_hash. Chunk-keyed rows are keyed by (block_height,
-- shard_id) instead of the chunk hash. One pass over actions does both.
ALTER TABLE actions ADD COLUMN code_hash text, ADD COLUMN shard_id integer, ALTER COLUMN detail DROP NOT NULL;
UPDATE actions a SET
    shard_id = c.shard_id,
    code_hash = CASE WHEN a.kind = 'UseGlobalContract' THEN a.detail->'UseGlobalContract'->>'code_hash' END,
    args = CASE WHEN a.kind = 'FunctionCall' THEN coalesce(a.args, '') ELSE a.args END,
    detail = CASE WHEN a.kind IN ('CreateAccount', 'FunctionCall', 'Transfer', 'Stake', 'DeleteKey',
                                  'DeleteAccount', 'UseGlobalContract') THEN NULL ELSE a.detail END
FROM chunks c WHERE c.chunk_hash = a.chunk_hash;

ALTER TABLE actions ALTER COLUMN shard_id SET NOT NULL;
ALTER TABLE actions DROP CONSTRAINT actions_pkey,
    ADD PRIMARY KEY (block_height, shard_id, parent_kind, parent_index, action_index);
ALTER TABLE receipts DROP CONSTRAINT receipts_pkey, ADD PRIMARY KEY (block_height, shard_id, index_in_chunk);
ALTER TABLE transactions DROP CONSTRAINT transactions_pkey, ADD PRIMARY KEY (block_height, shard_id, index_in_chunk);

-- The height columns only serve range deletes (re-committed heights) and
-- range scans: BRIN, a few pages, instead of a B-tree entry per row. The
-- leading height of the new primary keys covers actions, receipts and
-- transactions.
DROP INDEX transactions_block_height_idx, receipts_block_height_idx, actions_block_height_idx,
    execution_outcomes_block_height_idx, execution_outcomes_tx_block_height_idx,
    transaction_statuses_block_height_idx;
CREATE INDEX execution_outcomes_block_height_idx ON execution_outcomes USING brin (block_height);
CREATE INDEX execution_outcomes_tx_block_height_idx ON execution_outcomes USING brin (tx_block_height);
CREATE INDEX transaction_statuses_block_height_idx ON transaction_statuses USING brin (block_height);
-- The indexer revisits statuses that were not final when fetched.
CREATE INDEX transaction_statuses_pending_idx ON transaction_statuses (block_height, tx_hash)
    WHERE final_execution_status <> 'FINAL';

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    RAISE EXCEPTION 'layout 2 cannot be migrated down: re-index into a database migrated to version 5';
END
$$;
-- +goose StatementEnd
