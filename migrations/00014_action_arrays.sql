-- +goose Up
-- Layout 3, fourth step (docs/database-layout3.md): a chunk's actions'
-- typed columns are arrays in its chunks row, one element per action in the
-- order the store writes them, instead of a row per action. A mainnet block
-- has ~500 actions: as rows they took ~94 KiB a block (tuple headers, the
-- height and shard repeated, a primary key); the arrays TOAST compresses
-- (kinds, methods, relayers and keys repeat within a chunk). `actions`
-- stays, as a view with the same columns, so queries read as before; a
-- query by height (and shard) reads one chunks row per chunk. A chunk
-- without actions has NULLs (an empty array would take ~20 bytes each).
ALTER TABLE chunks
    ADD COLUMN action_parent_kinds text[],
    ADD COLUMN action_parent_indexes integer[],
    ADD COLUMN action_indexes integer[],
    ADD COLUMN action_kinds text[],
    ADD COLUMN action_method_names text[],
    ADD COLUMN action_gas bigint[],
    ADD COLUMN action_deposits numeric[],
    ADD COLUMN action_public_keys text[],
    ADD COLUMN action_beneficiary_ids text[],
    ADD COLUMN action_code_hashes text[],
    ADD COLUMN action_details text[],
    ADD COLUMN action_delegate_parent_indexes integer[],
    ADD COLUMN action_delegated_bys text[],
    ADD COLUMN action_delegate_sender_ids text[];

-- A chunk's row is at the height that included it, as its actions are. An
-- action whose chunk has no row (never written by Nearline) would be lost:
-- refuse instead.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM actions a WHERE NOT EXISTS
               (SELECT 1 FROM chunks c WHERE c.block_height = a.block_height AND c.shard_id = a.shard_id)) THEN
        RAISE EXCEPTION 'actions without their chunks row: re-index those heights into a database migrated to version 13 first';
    END IF;
END
$$;
-- +goose StatementEnd
UPDATE chunks c
SET action_parent_kinds = a.parent_kinds, action_parent_indexes = a.parent_indexes,
    action_indexes = a.action_indexes, action_kinds = a.kinds, action_method_names = a.method_names,
    action_gas = a.gas, action_deposits = a.deposits, action_public_keys = a.public_keys,
    action_beneficiary_ids = a.beneficiary_ids, action_code_hashes = a.code_hashes, action_details = a.details,
    action_delegate_parent_indexes = a.delegate_parent_indexes, action_delegated_bys = a.delegated_bys,
    action_delegate_sender_ids = a.delegate_sender_ids
FROM (SELECT block_height, shard_id,
             array_agg(parent_kind::text ORDER BY parent_kind DESC, parent_index, action_index) AS parent_kinds,
             array_agg(parent_index ORDER BY parent_kind DESC, parent_index, action_index) AS parent_indexes,
             array_agg(action_index ORDER BY parent_kind DESC, parent_index, action_index) AS action_indexes,
             array_agg(kind::text ORDER BY parent_kind DESC, parent_index, action_index) AS kinds,
             array_agg(method_name ORDER BY parent_kind DESC, parent_index, action_index) AS method_names,
             array_agg(gas ORDER BY parent_kind DESC, parent_index, action_index) AS gas,
             array_agg(deposit ORDER BY parent_kind DESC, parent_index, action_index) AS deposits,
             array_agg(public_key ORDER BY parent_kind DESC, parent_index, action_index) AS public_keys,
             array_agg(beneficiary_id ORDER BY parent_kind DESC, parent_index, action_index) AS beneficiary_ids,
             array_agg(code_hash ORDER BY parent_kind DESC, parent_index, action_index) AS code_hashes,
             array_agg(detail::text ORDER BY parent_kind DESC, parent_index, action_index) AS details,
             array_agg(delegate_parent_index ORDER BY parent_kind DESC, parent_index, action_index) AS delegate_parent_indexes,
             array_agg(delegated_by ORDER BY parent_kind DESC, parent_index, action_index) AS delegated_bys,
             array_agg(delegate_sender_id ORDER BY parent_kind DESC, parent_index, action_index) AS delegate_sender_ids
      FROM actions GROUP BY block_height, shard_id) a
WHERE c.block_height = a.block_height AND c.shard_id = a.shard_id;

DROP TABLE actions;

-- +goose StatementBegin
DO $$
BEGIN
    ALTER TABLE chunks ALTER COLUMN action_parent_kinds SET COMPRESSION lz4,
        ALTER COLUMN action_parent_indexes SET COMPRESSION lz4, ALTER COLUMN action_indexes SET COMPRESSION lz4,
        ALTER COLUMN action_kinds SET COMPRESSION lz4, ALTER COLUMN action_method_names SET COMPRESSION lz4,
        ALTER COLUMN action_gas SET COMPRESSION lz4, ALTER COLUMN action_deposits SET COMPRESSION lz4,
        ALTER COLUMN action_public_keys SET COMPRESSION lz4, ALTER COLUMN action_beneficiary_ids SET COMPRESSION lz4,
        ALTER COLUMN action_code_hashes SET COMPRESSION lz4, ALTER COLUMN action_details SET COMPRESSION lz4,
        ALTER COLUMN action_delegate_parent_indexes SET COMPRESSION lz4,
        ALTER COLUMN action_delegated_bys SET COMPRESSION lz4, ALTER COLUMN action_delegate_sender_ids SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value OR syntax_error THEN
    RAISE NOTICE 'lz4 compression not available, keeping the default';
END
$$;
-- +goose StatementEnd

CREATE VIEW actions AS
SELECT u.parent_kind::action_parent_kind AS parent_kind, u.parent_index, u.action_index, c.block_height,
       u.kind::action_kind AS kind, u.method_name, u.gas, u.deposit::numeric(39,0) AS deposit, u.public_key,
       u.beneficiary_id, u.detail::json AS detail, u.code_hash, c.shard_id, u.delegate_parent_index,
       u.delegated_by, u.delegate_sender_id
FROM chunks c
CROSS JOIN LATERAL unnest(c.action_parent_kinds, c.action_parent_indexes, c.action_indexes, c.action_kinds,
    c.action_method_names, c.action_gas, c.action_deposits, c.action_public_keys, c.action_beneficiary_ids,
    c.action_code_hashes, c.action_details, c.action_delegate_parent_indexes, c.action_delegated_bys,
    c.action_delegate_sender_ids)
    AS u(parent_kind, parent_index, action_index, kind, method_name, gas, deposit, public_key, beneficiary_id,
         code_hash, detail, delegate_parent_index, delegated_by, delegate_sender_id);

-- +goose Down
-- The rows again, one per action, in the partitions chunks has.
DROP VIEW actions;
CREATE TABLE actions (
    parent_kind           action_parent_kind NOT NULL,
    parent_index          integer NOT NULL,
    action_index          integer NOT NULL,
    block_height          bigint NOT NULL,
    kind                  action_kind NOT NULL,
    method_name           text,
    gas                   bigint,
    deposit               numeric(39,0),
    public_key            text,
    beneficiary_id        text,
    detail                json,
    code_hash             text,
    shard_id              integer NOT NULL,
    delegate_parent_index integer,
    delegated_by          text,
    delegate_sender_id    text,
    PRIMARY KEY (block_height, shard_id, parent_kind, parent_index, action_index)
) PARTITION BY RANGE (block_height);
-- +goose StatementBegin
DO $$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = 'chunks'::regclass LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF actions %s', replace(p.relname, 'chunks', 'actions'), p.bound);
    END LOOP;
END
$$;
-- +goose StatementEnd
INSERT INTO actions
SELECT u.parent_kind::action_parent_kind, u.parent_index, u.action_index, c.block_height, u.kind::action_kind,
       u.method_name, u.gas, u.deposit, u.public_key, u.beneficiary_id, u.detail::json, u.code_hash, c.shard_id,
       u.delegate_parent_index, u.delegated_by, u.delegate_sender_id
FROM chunks c
CROSS JOIN LATERAL unnest(c.action_parent_kinds, c.action_parent_indexes, c.action_indexes, c.action_kinds,
    c.action_method_names, c.action_gas, c.action_deposits, c.action_public_keys, c.action_beneficiary_ids,
    c.action_code_hashes, c.action_details, c.action_delegate_parent_indexes, c.action_delegated_bys,
    c.action_delegate_sender_ids)
    AS u(parent_kind, parent_index, action_index, kind, method_name, gas, deposit, public_key, beneficiary_id,
         code_hash, detail, delegate_parent_index, delegated_by, delegate_sender_id);
ALTER TABLE chunks DROP COLUMN action_parent_kinds, DROP COLUMN action_parent_indexes, DROP COLUMN action_indexes,
    DROP COLUMN action_kinds, DROP COLUMN action_method_names, DROP COLUMN action_gas, DROP COLUMN action_deposits,
    DROP COLUMN action_public_keys, DROP COLUMN action_beneficiary_ids, DROP COLUMN action_code_hashes,
    DROP COLUMN action_details, DROP COLUMN action_delegate_parent_indexes, DROP COLUMN action_delegated_bys,
    DROP COLUMN action_delegate_sender_ids;
