-- +goose Up
-- Layout 4, first step (docs/database-storage.md): an execution outcome
-- names its transaction by place and keeps only what SQL asks of it.
--
-- The outcome as served is in its transaction's status (block_tx_statuses):
-- the row keeps its id, heights, executor, gas and tokens burnt, and its
-- failure (the Failure member of its status, NULL when it succeeded); the
-- status JSON (a SuccessValue's bytes, a SuccessReceiptId) is read from the
-- status. tx_hash (44 characters) becomes tx_index, the transaction's
-- index_in_block in transaction_statuses at tx_block_height, and
-- outcome_index its place in the status (0: the transaction's own, then
-- its receipts' in the status's order; rows from before this migration are
-- numbered in the order of their execution height). The primary key,
-- (tx_block_height, tx_index, outcome_index), replaces the one led by the
-- 44-character id, which a hash index now finds. Rewrites
-- execution_outcomes: on a large archive this takes a while.
ALTER TABLE execution_outcomes ADD COLUMN failure json, ADD COLUMN tx_index integer, ADD COLUMN outcome_index integer;
UPDATE execution_outcomes o SET tx_index = s.index_in_block, outcome_index = n.i,
       failure = CASE WHEN o.status::jsonb ? 'Failure' THEN (o.status::jsonb -> 'Failure')::json END
FROM transaction_statuses s,
     (SELECT id, block_height, tx_block_height,
             row_number() OVER (PARTITION BY tx_block_height, tx_hash
                                ORDER BY id = tx_hash DESC, block_height, id) - 1 AS i
      FROM execution_outcomes) n
WHERE s.block_height = o.tx_block_height AND s.tx_hash = o.tx_hash
  AND n.tx_block_height = o.tx_block_height AND n.id = o.id AND n.block_height = o.block_height;
-- An outcome whose status row is gone cannot be named by place.
DELETE FROM execution_outcomes WHERE tx_index IS NULL;
ALTER TABLE execution_outcomes DROP CONSTRAINT execution_outcomes_pkey;
DROP INDEX execution_outcomes_tx_hash_idx;
ALTER TABLE execution_outcomes DROP COLUMN status, DROP COLUMN tx_hash,
    ALTER COLUMN tx_index SET NOT NULL, ALTER COLUMN outcome_index SET NOT NULL;
ALTER TABLE execution_outcomes ADD PRIMARY KEY (tx_block_height, tx_index, outcome_index);
CREATE INDEX execution_outcomes_id_idx ON execution_outcomes USING hash (id);

-- A status is found by hash with a hash index (as transactions are), and
-- by place (an outcome's transaction) with the primary key.
ALTER TABLE transaction_statuses DROP CONSTRAINT transaction_statuses_pkey;
ALTER TABLE transaction_statuses ADD PRIMARY KEY (block_height, index_in_block);
CREATE INDEX transaction_statuses_tx_hash_idx ON transaction_statuses USING hash (tx_hash);

-- +goose Down
-- +goose StatementBegin
-- The statuses of succeeded outcomes are only in the packed documents,
-- which SQL cannot read: going back means restoring a backup.
DO $$ BEGIN
    RAISE EXCEPTION 'layout 4 cannot be migrated down: the statuses of succeeded outcomes are kept only in the packed status documents; restore a backup taken before upgrading, or re-index into a database migrated to version 16';
END $$;
-- +goose StatementEnd
