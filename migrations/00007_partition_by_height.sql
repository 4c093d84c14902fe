-- +goose Up
-- Block-keyed tables are range-partitioned by height, so that an old range
-- can be detached, moved to another tablespace or dropped without touching
-- the rest (README, "Partitions"). Every primary key includes the height.
-- The store creates each table's partition for a range before it writes
-- the range's first block, and the next range's with it. Partitions are
-- named <table>_h<first height, 12 digits>.
--
-- The state history tables (account_history, ...) are keyed by account and
-- stay whole: the state at any height depends on them.

-- The number of heights per partition. It may be changed only while the
-- archive is empty.
CREATE TABLE height_partitioning (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    size        bigint NOT NULL CHECK (size > 0)
);
INSERT INTO height_partitioning (size) VALUES (10000000);

-- +goose StatementBegin
CREATE FUNCTION nearline_partition_by_height(t text, key text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    size bigint;
    lo   bigint;
    hi   bigint;
    b    bigint;
    old  text := t || '_layout2';
BEGIN
    SELECT p.size INTO size FROM height_partitioning p;
    EXECUTE format('ALTER TABLE %I RENAME TO %I', t, old);
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING ALL EXCLUDING INDEXES) PARTITION BY RANGE (%I)', t, old, key);
    EXECUTE format('SELECT min(%I), max(%I) FROM %I', key, key, old) INTO lo, hi;
    IF lo IS NOT NULL THEN
        b := lo - lo % size;
        WHILE b <= hi LOOP
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)',
                t || '_h' || lpad(b::text, 12, '0'), t, b, b + size);
            b := b + size;
        END LOOP;
        EXECUTE format('INSERT INTO %I SELECT * FROM %I', t, old);
    END IF;
    EXECUTE format('DROP TABLE %I', old);
END
$$;
-- +goose StatementEnd

SELECT nearline_partition_by_height('blocks', 'height');
SELECT nearline_partition_by_height('skipped_heights', 'height');
SELECT nearline_partition_by_height('block_chunks', 'block_height');
SELECT nearline_partition_by_height('chunks', 'block_height');
SELECT nearline_partition_by_height('transactions', 'block_height');
SELECT nearline_partition_by_height('receipts', 'block_height');
SELECT nearline_partition_by_height('actions', 'block_height');
-- Outcomes go with the transaction whose status listed them.
SELECT nearline_partition_by_height('execution_outcomes', 'tx_block_height');
SELECT nearline_partition_by_height('transaction_statuses', 'block_height');
SELECT nearline_partition_by_height('state_changes', 'block_height');
SELECT nearline_partition_by_height('block_effects', 'block_height');
SELECT nearline_partition_by_height('block_changes', 'block_height');
SELECT nearline_partition_by_height('block_tx_statuses', 'block_height');
DROP FUNCTION nearline_partition_by_height(text, text);

-- Keys and indexes, built once over the moved rows. A key that starts with a
-- hash finds it without a second index; a hash is looked up in every
-- partition's index (no height to prune by): a few index probes per
-- partition.
ALTER TABLE blocks ADD PRIMARY KEY (height);
CREATE INDEX blocks_hash_idx ON blocks (hash);
CREATE INDEX blocks_time_idx ON blocks (block_time);
ALTER TABLE skipped_heights ADD PRIMARY KEY (height);
CREATE INDEX skipped_heights_next_height_idx ON skipped_heights (next_height);
ALTER TABLE block_chunks ADD PRIMARY KEY (block_height, shard_id);
ALTER TABLE chunks ADD PRIMARY KEY (chunk_hash, block_height);
CREATE INDEX chunks_block_height_idx ON chunks (block_height, shard_id);
ALTER TABLE transactions ADD PRIMARY KEY (block_height, shard_id, index_in_chunk);
CREATE INDEX transactions_hash_idx ON transactions (hash);
CREATE INDEX transactions_signer_idx ON transactions (signer_id, block_height);
CREATE INDEX transactions_receiver_idx ON transactions (receiver_id, block_height);
ALTER TABLE receipts ADD PRIMARY KEY (block_height, shard_id, index_in_chunk);
CREATE INDEX receipts_receipt_id_idx ON receipts (receipt_id);
CREATE INDEX receipts_receiver_idx ON receipts (receiver_id, block_height);
CREATE INDEX receipts_predecessor_idx ON receipts (predecessor_id, block_height);
ALTER TABLE actions ADD PRIMARY KEY (block_height, shard_id, parent_kind, parent_index, action_index);
CREATE INDEX actions_method_idx ON actions (method_name) WHERE method_name IS NOT NULL;
-- One outcome per receipt (or transaction) per status listing it; the key
-- finds an outcome by its id.
ALTER TABLE execution_outcomes ADD PRIMARY KEY (id, block_height, tx_block_height);
CREATE INDEX execution_outcomes_tx_hash_idx ON execution_outcomes (tx_hash);
CREATE INDEX execution_outcomes_executor_idx ON execution_outcomes (executor_id, block_height);
CREATE INDEX execution_outcomes_block_height_idx ON execution_outcomes USING brin (block_height);
-- A transaction hash included twice (it happens on mainnet) has a status
-- per inclusion; reads take the first.
ALTER TABLE transaction_statuses ADD PRIMARY KEY (tx_hash, signer_id, block_height);
CREATE INDEX transaction_statuses_pending_idx ON transaction_statuses (block_height, tx_hash)
    WHERE final_execution_status <> 'FINAL';
ALTER TABLE state_changes ADD PRIMARY KEY (block_height, index_in_block);
CREATE INDEX state_changes_account_idx ON state_changes (account_id, block_height);
ALTER TABLE block_effects ADD PRIMARY KEY (block_height, index_in_block);
ALTER TABLE block_changes ADD PRIMARY KEY (block_height);
ALTER TABLE block_tx_statuses ADD PRIMARY KEY (block_height);

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    RAISE EXCEPTION 'partitioned tables cannot be migrated down: re-index into a database migrated to version 6';
END
$$;
-- +goose StatementEnd
