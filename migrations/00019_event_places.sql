-- +goose Up
-- Layout 4, token events of integers (docs/database-storage.md): an event
-- row keeps what only it knows and names the rest by key.
--
-- block_time was a copy of the executing block's time, NULL until that
-- block was committed and then set by an UPDATE of every such row (a dead
-- tuple each, and a partial index to find them): the views read it from
-- blocks by block_height. The outcome is named by place, as
-- execution_outcomes names it (00017): tx_hash (44 characters) becomes
-- tx_index, the transaction's index_in_block in transaction_statuses at
-- tx_block_height, and receipt_id (44 characters, in the row and in two
-- indexes) outcome_index, the outcome's place in that status; the views
-- read the hash and the id from there. event is an enum of the nine names
-- the store writes. The views with the old names return the columns and
-- values of layout 3.
--
-- The key becomes (tx_block_height, tx_index, outcome_index, log_index,
-- event_index), and an account's events are indexed in the order
-- (block_height, tx_block_height, tx_index, outcome_index, log_index,
-- event_index): a block's events in their transactions' and outcomes'
-- order instead of their receipt ids'.
--
-- It rewrites the event tables (stop `index` and `serve`). An event whose
-- transaction status or outcome row is gone cannot be named by place and
-- is dropped, as 00017 dropped such outcomes.

-- Not on a distributed archive (Citus 13.0.5 adds a key only in an ALTER
-- TABLE of its own, and joins the event tables with the outcomes only
-- when both are distributed): an archive is distributed at version 21 or
-- later (docs/scaling.md, "Upgrades").
-- +goose StatementBegin
DO $$
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition) THEN
      RAISE EXCEPTION 'migration 00019 does not run on a distributed archive: undistribute its tables on the coordinator (SELECT undistribute_table(logicalrelid) FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid WHERE NOT c.relispartition), then run nearline migrate --citus again (docs/scaling.md)'
        USING ERRCODE = 'feature_not_supported';
    END IF;
  END IF;
END $$;
-- +goose StatementEnd

DROP VIEW ft_events, nft_events, mt_events;

-- +goose StatementBegin
DO $$
DECLARE
  labels text;
BEGIN
  SELECT string_agg(quote_literal(l), ', ' ORDER BY l COLLATE "C") INTO labels
  FROM (SELECT unnest(ARRAY['ft_burn', 'ft_mint', 'ft_transfer', 'mt_burn', 'mt_mint', 'mt_transfer',
                            'nft_burn', 'nft_mint', 'nft_transfer'])
        UNION SELECT DISTINCT event FROM ft_events_ids
        UNION SELECT DISTINCT event FROM nft_events_ids
        UNION SELECT DISTINCT event FROM mt_events_ids) x(l);
  EXECUTE format('CREATE TYPE token_event AS ENUM (%s)', labels);
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['ft_events', 'nft_events', 'mt_events'] LOOP
    EXECUTE format('ALTER TABLE %I ADD COLUMN tx_index integer, ADD COLUMN outcome_index integer', t || '_ids');
    EXECUTE format('UPDATE %I e SET tx_index = o.tx_index, outcome_index = o.outcome_index
                    FROM transaction_statuses s, execution_outcomes o
                    WHERE s.block_height = e.tx_block_height AND s.tx_hash = e.tx_hash
                      AND o.tx_block_height = e.tx_block_height AND o.tx_index = s.index_in_block
                      AND o.id = e.receipt_id', t || '_ids');
    EXECUTE format('DELETE FROM %I WHERE tx_index IS NULL', t || '_ids');
    -- Dropping a column drops the indexes on it: the key, the account's
    -- and the partial *_untimed_idx.
    EXECUTE format('ALTER TABLE %I DROP COLUMN block_time, DROP COLUMN tx_hash, DROP COLUMN receipt_id,
        ALTER COLUMN tx_index SET NOT NULL, ALTER COLUMN outcome_index SET NOT NULL,
        ALTER COLUMN event TYPE token_event USING event::token_event,
        ADD CONSTRAINT %I PRIMARY KEY (tx_block_height, tx_index, outcome_index, log_index, event_index)',
        t || '_ids', t || '_pkey');
    EXECUTE format('CREATE INDEX %I ON %I (account, block_height, tx_block_height, tx_index, outcome_index,
        log_index, event_index)', t || '_account_idx', t || '_ids');
  END LOOP;
END $$;
-- +goose StatementEnd

-- The views: layout 3's columns. The receipt id, the block time and the
-- transaction hash are subqueries by key (execution_outcomes and
-- transaction_statuses by place, blocks by height), the names outer joins
-- on accounts' key: a query that names none of those columns reads none
-- of those tables (PostgreSQL removes an unused outer join only on a
-- table that is not partitioned).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION pg_temp.event_view(t text, standard text, receipt_id text, block_time text, tx_hash text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  token text := CASE WHEN t = 'ft_events' THEN '' ELSE 'e.token_index, e.token_id, ' END;
  authorized text := CASE WHEN t = 'ft_events' THEN '' ELSE 'e.authorized_id, ' END;
BEGIN
  EXECUTE format('CREATE VIEW %I AS
    SELECT e.tx_block_height, %s AS receipt_id, e.log_index, e.event_index, e.block_height, %s AS block_time,
           %s AS tx_hash, c.name AS contract_id, %L::text AS standard, e.version, e.event::text AS event,
           e.item_index, %s a.name AS account_id, o.name AS other_account_id, e.delta_amount, %s e.memo
    FROM %I e
    LEFT JOIN accounts c ON c.id = e.contract
    LEFT JOIN accounts a ON a.id = e.account
    LEFT JOIN accounts o ON o.id = e.other_account', t, receipt_id, block_time, tx_hash, standard, token, authorized,
    t || '_ids');
END $$;
-- +goose StatementEnd

SELECT pg_temp.event_view(t, s,
    '(SELECT o.id FROM execution_outcomes o WHERE o.tx_block_height = e.tx_block_height AND o.tx_index = e.tx_index
      AND o.outcome_index = e.outcome_index)',
    '(SELECT b.block_time FROM blocks b WHERE b.height = e.block_height)',
    '(SELECT s.tx_hash FROM transaction_statuses s WHERE s.block_height = e.tx_block_height AND s.index_in_block = e.tx_index)')
FROM (VALUES ('ft_events', 'nep141'), ('nft_events', 'nep171'), ('mt_events', 'nep245')) v(t, s);

-- +goose Down
DROP VIEW ft_events, nft_events, mt_events;

-- +goose StatementBegin
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['ft_events', 'nft_events', 'mt_events'] LOOP
    EXECUTE format('ALTER TABLE %I ADD COLUMN receipt_id text, ADD COLUMN block_time timestamptz,
        ADD COLUMN tx_hash text, ALTER COLUMN event TYPE text', t || '_ids');
    EXECUTE format('UPDATE %I e SET receipt_id = o.id, tx_hash = s.tx_hash
                    FROM transaction_statuses s, execution_outcomes o
                    WHERE s.block_height = e.tx_block_height AND s.index_in_block = e.tx_index
                      AND o.tx_block_height = e.tx_block_height AND o.tx_index = e.tx_index
                      AND o.outcome_index = e.outcome_index', t || '_ids');
    EXECUTE format('UPDATE %I e SET block_time = b.block_time FROM blocks b WHERE b.height = e.block_height', t || '_ids');
    EXECUTE format('ALTER TABLE %I DROP COLUMN tx_index, DROP COLUMN outcome_index,
        ALTER COLUMN receipt_id SET NOT NULL, ALTER COLUMN tx_hash SET NOT NULL,
        ADD CONSTRAINT %I PRIMARY KEY (tx_block_height, receipt_id, log_index, event_index)', t || '_ids', t || '_pkey');
    EXECUTE format('CREATE INDEX %I ON %I (account, block_height, receipt_id, log_index, event_index)',
        t || '_account_idx', t || '_ids');
    EXECUTE format('CREATE INDEX %I ON %I (block_height) WHERE block_time IS NULL', t || '_untimed_idx', t || '_ids');
  END LOOP;
END $$;
-- +goose StatementEnd

DROP TYPE token_event;

-- The views as 00018 made them.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION pg_temp.event_view(t text, standard text, receipt_id text, block_time text, tx_hash text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  token text := CASE WHEN t = 'ft_events' THEN '' ELSE 'e.token_index, e.token_id, ' END;
  authorized text := CASE WHEN t = 'ft_events' THEN '' ELSE 'e.authorized_id, ' END;
BEGIN
  EXECUTE format('CREATE VIEW %I AS
    SELECT e.tx_block_height, %s AS receipt_id, e.log_index, e.event_index, e.block_height, %s AS block_time,
           %s AS tx_hash, c.name AS contract_id, %L::text AS standard, e.version, e.event::text AS event,
           e.item_index, %s a.name AS account_id, o.name AS other_account_id, e.delta_amount, %s e.memo
    FROM %I e
    LEFT JOIN accounts c ON c.id = e.contract
    LEFT JOIN accounts a ON a.id = e.account
    LEFT JOIN accounts o ON o.id = e.other_account', t, receipt_id, block_time, tx_hash, standard, token, authorized,
    t || '_ids');
END $$;
-- +goose StatementEnd

SELECT pg_temp.event_view(t, s, 'e.receipt_id', 'e.block_time', 'e.tx_hash')
FROM (VALUES ('ft_events', 'nep141'), ('nft_events', 'nep171'), ('mt_events', 'nep245')) v(t, s);
