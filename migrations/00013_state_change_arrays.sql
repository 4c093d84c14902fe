-- +goose Up
-- Layout 3, third step (docs/database-layout3.md): a block's typed state
-- change columns are arrays in its block_changes row, in upstream order,
-- instead of a row per change. A mainnet block has ~1,000 changes: as rows
-- they took ~170 KiB a block (28 bytes of tuple header and line pointer
-- each, the block height repeated, two indexes); as four arrays TOAST
-- compresses (the accounts and cause receipts of a block repeat), they take
-- a fraction of it. `state_changes` stays, as a view with the same columns,
-- so queries read as before; a query by height reads one row. A block
-- without changes (effects only) has NULLs.
ALTER TABLE block_changes
    ADD COLUMN account_ids text[],
    ADD COLUMN change_types text[],
    ADD COLUMN cause_types text[],
    ADD COLUMN cause_receipt_hashes text[];

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM state_changes s WHERE NOT EXISTS
               (SELECT 1 FROM block_changes c WHERE c.block_height = s.block_height)) THEN
        RAISE EXCEPTION 'state changes without their block_changes row: re-index those heights into a database migrated to version 12 first';
    END IF;
END
$$;
-- +goose StatementEnd
UPDATE block_changes c
SET account_ids = s.account_ids, change_types = s.change_types, cause_types = s.cause_types,
    cause_receipt_hashes = s.cause_receipt_hashes
FROM (SELECT block_height,
             array_agg(account_id ORDER BY index_in_block) AS account_ids,
             array_agg(change_type::text ORDER BY index_in_block) AS change_types,
             array_agg(cause_type::text ORDER BY index_in_block) AS cause_types,
             array_agg(cause_receipt_hash ORDER BY index_in_block) AS cause_receipt_hashes
      FROM state_changes GROUP BY block_height) s
WHERE s.block_height = c.block_height;

DROP TABLE state_changes;

-- lz4 where the server has it: its 64 KiB window finds the repeats of a
-- block's ~100 KB of arrays (pglz's 4 KiB one finds fewer), and it is faster.
-- +goose StatementBegin
DO $$
BEGIN
    ALTER TABLE block_changes ALTER COLUMN account_ids SET COMPRESSION lz4,
        ALTER COLUMN change_types SET COMPRESSION lz4, ALTER COLUMN cause_types SET COMPRESSION lz4,
        ALTER COLUMN cause_receipt_hashes SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value OR syntax_error THEN
    RAISE NOTICE 'lz4 compression not available, keeping the default';
END
$$;
-- +goose StatementEnd

-- A change's place in the block (index_in_block) is its place in the
-- arrays, from 0; the kinds are the enum types of migration 00012.
CREATE VIEW state_changes AS
SELECT c.block_height, (u.i - 1)::integer AS index_in_block, u.account_id,
       u.change_type::state_change_type AS change_type, u.cause_type::state_change_cause AS cause_type,
       u.cause_receipt_hash
FROM block_changes c
CROSS JOIN LATERAL unnest(c.account_ids, c.change_types, c.cause_types, c.cause_receipt_hashes)
    WITH ORDINALITY AS u(account_id, change_type, cause_type, cause_receipt_hash, i);

-- +goose Down
-- The rows again, one per change, in the partitions block_changes has.
DROP VIEW state_changes;
CREATE TABLE state_changes (
    block_height       bigint NOT NULL,
    index_in_block     integer NOT NULL,
    account_id         text NOT NULL,
    change_type        state_change_type NOT NULL,
    cause_type         state_change_cause NOT NULL,
    cause_receipt_hash text,
    PRIMARY KEY (block_height, index_in_block)
) PARTITION BY RANGE (block_height);
CREATE INDEX state_changes_account_idx ON state_changes (account_id, block_height);
-- +goose StatementBegin
DO $$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = 'block_changes'::regclass LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF state_changes %s',
            replace(p.relname, 'block_changes', 'state_changes'), p.bound);
    END LOOP;
END
$$;
-- +goose StatementEnd
INSERT INTO state_changes
SELECT c.block_height, (u.i - 1)::integer, u.account_id, u.change_type::state_change_type,
       u.cause_type::state_change_cause, u.cause_receipt_hash
FROM block_changes c
CROSS JOIN LATERAL unnest(c.account_ids, c.change_types, c.cause_types, c.cause_receipt_hashes)
    WITH ORDINALITY AS u(account_id, change_type, cause_type, cause_receipt_hash, i);
ALTER TABLE block_changes DROP COLUMN account_ids, DROP COLUMN change_types, DROP COLUMN cause_types,
    DROP COLUMN cause_receipt_hashes;
