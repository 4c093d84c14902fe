-- +goose Up
-- Layout 4, account ids of the chain tables (docs/database-storage.md):
-- the account ids of receipts (predecessor, receiver, signer),
-- transactions (signer, receiver) and execution outcomes (executor) are
-- integers naming rows of accounts, as 00018 made those of the history,
-- activity and token event tables: ~1,100 names a mainnet block.
--
-- The tables keep their rows under <table>_ids (their partitions renamed
-- with them, <table>_ids_h<first height>), the columns as integers named
-- without _id; a view with the old name and columns joins accounts back
-- in, so SQL written before reads the same rows. It rewrites the three
-- tables and their indexes: stop `index` and `serve`, take a backup.
-- Not on a distributed archive (Citus 13.0.5 refuses the correlated
-- NOT EXISTS of the INSERT into accounts, and would run the pg_temp
-- function of the rewrites on the workers): an archive is distributed at
-- version 21 or later (docs/scaling.md, "Upgrades").
-- +goose StatementBegin
DO $$
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition) THEN
      RAISE EXCEPTION 'migration 00020 does not run on a distributed archive: undistribute its tables on the coordinator (SELECT undistribute_table(logicalrelid) FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid WHERE NOT c.relispartition), then run nearline migrate --citus again (docs/scaling.md)'
        USING ERRCODE = 'feature_not_supported';
    END IF;
  END IF;
END $$;
-- +goose StatementEnd

INSERT INTO accounts (name)
SELECT name FROM (
    SELECT predecessor_id AS name FROM receipts
    UNION SELECT receiver_id FROM receipts
    UNION SELECT signer_id FROM receipts WHERE signer_id IS NOT NULL
    UNION SELECT signer_id FROM transactions
    UNION SELECT receiver_id FROM transactions
    UNION SELECT executor_id FROM execution_outcomes) n
WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.name = n.name)
ORDER BY name;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION pg_temp.account_number(account text) RETURNS integer LANGUAGE sql STABLE STRICT
AS $$ SELECT id FROM accounts WHERE name = account $$;
-- +goose StatementEnd

ALTER TABLE receipts RENAME TO receipts_ids;
ALTER TABLE receipts_ids
    ALTER COLUMN predecessor_id TYPE integer USING pg_temp.account_number(predecessor_id),
    ALTER COLUMN receiver_id TYPE integer USING pg_temp.account_number(receiver_id),
    ALTER COLUMN signer_id TYPE integer USING pg_temp.account_number(signer_id);
ALTER TABLE receipts_ids RENAME COLUMN predecessor_id TO predecessor;
ALTER TABLE receipts_ids RENAME COLUMN receiver_id TO receiver;
ALTER TABLE receipts_ids RENAME COLUMN signer_id TO signer;

ALTER TABLE transactions RENAME TO transactions_ids;
ALTER TABLE transactions_ids
    ALTER COLUMN signer_id TYPE integer USING pg_temp.account_number(signer_id),
    ALTER COLUMN receiver_id TYPE integer USING pg_temp.account_number(receiver_id);
ALTER TABLE transactions_ids RENAME COLUMN signer_id TO signer;
ALTER TABLE transactions_ids RENAME COLUMN receiver_id TO receiver;

ALTER TABLE execution_outcomes RENAME TO execution_outcomes_ids;
ALTER TABLE execution_outcomes_ids
    ALTER COLUMN executor_id TYPE integer USING pg_temp.account_number(executor_id);
ALTER TABLE execution_outcomes_ids RENAME COLUMN executor_id TO executor;

-- The partitions follow their table's name (<table>_ids_h<first height>),
-- which the indexer creates the next ranges under.
-- +goose StatementBegin
DO $$
DECLARE
  p record;
BEGIN
  FOR p IN SELECT c.relname AS name, i.inhparent::regclass::text AS parent
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           WHERE i.inhparent IN ('receipts_ids'::regclass, 'transactions_ids'::regclass, 'execution_outcomes_ids'::regclass)
             AND c.relname LIKE left(i.inhparent::regclass::text, -4) || '\_h%' LOOP
    EXECUTE format('ALTER TABLE %I RENAME TO %I', p.name, p.parent || substr(p.name, length(p.parent) - 3));
  END LOOP;
END $$;
-- +goose StatementEnd

-- The views: the tables as they read before, names joined back in by
-- outer joins on accounts' key (not made when no name is asked for).
CREATE VIEW receipts AS
SELECT r.index_in_chunk, r.receipt_id, r.block_height, r.shard_id, p.name AS predecessor_id,
       v.name AS receiver_id, r.kind, s.name AS signer_id
FROM receipts_ids r
LEFT JOIN accounts p ON p.id = r.predecessor
LEFT JOIN accounts v ON v.id = r.receiver
LEFT JOIN accounts s ON s.id = r.signer;

CREATE VIEW transactions AS
SELECT t.index_in_chunk, t.hash, t.block_height, t.shard_id, s.name AS signer_id, t.public_key, t.nonce,
       v.name AS receiver_id, t.priority_fee, t.action_count
FROM transactions_ids t
LEFT JOIN accounts s ON s.id = t.signer
LEFT JOIN accounts v ON v.id = t.receiver;

CREATE VIEW execution_outcomes AS
SELECT o.id, o.block_height, x.name AS executor_id, o.gas_burnt, o.tokens_burnt, o.tx_block_height, o.failure,
       o.tx_index, o.outcome_index
FROM execution_outcomes_ids o
LEFT JOIN accounts x ON x.id = o.executor;

-- +goose Down
DROP VIEW receipts, transactions, execution_outcomes;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION pg_temp.account_name(account integer) RETURNS text LANGUAGE sql STABLE STRICT
AS $$ SELECT name FROM accounts WHERE id = account $$;
-- +goose StatementEnd

ALTER TABLE receipts_ids
    ALTER COLUMN predecessor TYPE text USING pg_temp.account_name(predecessor),
    ALTER COLUMN receiver TYPE text USING pg_temp.account_name(receiver),
    ALTER COLUMN signer TYPE text USING pg_temp.account_name(signer);
ALTER TABLE receipts_ids RENAME COLUMN predecessor TO predecessor_id;
ALTER TABLE receipts_ids RENAME COLUMN receiver TO receiver_id;
ALTER TABLE receipts_ids RENAME COLUMN signer TO signer_id;
ALTER TABLE receipts_ids RENAME TO receipts;

ALTER TABLE transactions_ids
    ALTER COLUMN signer TYPE text USING pg_temp.account_name(signer),
    ALTER COLUMN receiver TYPE text USING pg_temp.account_name(receiver);
ALTER TABLE transactions_ids RENAME COLUMN signer TO signer_id;
ALTER TABLE transactions_ids RENAME COLUMN receiver TO receiver_id;
ALTER TABLE transactions_ids RENAME TO transactions;

ALTER TABLE execution_outcomes_ids ALTER COLUMN executor TYPE text USING pg_temp.account_name(executor);
ALTER TABLE execution_outcomes_ids RENAME COLUMN executor TO executor_id;
ALTER TABLE execution_outcomes_ids RENAME TO execution_outcomes;

-- +goose StatementBegin
DO $$
DECLARE
  p record;
BEGIN
  FOR p IN SELECT c.relname AS name, i.inhparent::regclass::text AS parent
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           WHERE i.inhparent IN ('receipts'::regclass, 'transactions'::regclass, 'execution_outcomes'::regclass)
             AND c.relname LIKE i.inhparent::regclass::text || '\_ids\_h%' LOOP
    EXECUTE format('ALTER TABLE %I RENAME TO %I', p.name, p.parent || substr(p.name, length(p.parent) + 5));
  END LOOP;
END $$;
-- +goose StatementEnd
