-- +goose Up
-- Layout 4, account activity of integers (docs/database-storage.md): a
-- token event's activity row names its event by place, as 00019 named the
-- event rows, instead of by its receipt id (44 characters, in the row and
-- the primary key, ~107 rows a mainnet block).
--
-- ref_id (text) becomes ref (integer): 0 for the rows of transactions,
-- receipts and balances (their ref_id was ''), and for a token event's row
-- its transaction's index_in_block in transaction_statuses at
-- source_height (the transaction's block). A token row's position packs
-- the blocks from its transaction to its execution (<< 40), the outcome's
-- place in the status (<< 24), the log's in the outcome (<< 16) and the
-- event's among the log's rows: the key (account, block_height, kind,
-- ref, position) stays unique, two transactions of different blocks
-- executing in one block being told apart by their delay. It was
-- log_index << 32 | event_index. The view account_activity returns the
-- columns and values of before: ref_id the receipt id by a subquery on
-- execution_outcomes_ids' key, position unpacked.
--
-- source_height is dropped: it is block_height less a token row's delay
-- (below).
--
-- It makes account_activity_ids anew, copying its rows, and builds its key
-- (stop `index` and `serve`; it needs free disk about the table's size).
-- On Citus it runs before the archive is distributed (below), and
-- `nearline migrate --citus` then distributes the new table. A
-- token row whose outcome row is gone, or whose place does not fit the
-- packing (the store writes no such row), is dropped.
-- Not on a distributed archive (Citus 13.0.5 does not call a STABLE
-- function of a row's columns in the DELETE of distributed rows): an
-- archive is distributed at version 21 or later (docs/scaling.md,
-- "Upgrades").
-- +goose StatementBegin
DO $$
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition) THEN
      RAISE EXCEPTION 'migration 00021 does not run on a distributed archive: undistribute its tables on the coordinator (SELECT undistribute_table(logicalrelid) FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid WHERE NOT c.relispartition), then run nearline migrate --citus again (docs/scaling.md)'
        USING ERRCODE = 'feature_not_supported';
    END IF;
  END IF;
END $$;
-- +goose StatementEnd

DROP VIEW account_activity;

-- The first outcome of the receipt at the transaction height: an outcome
-- listed by two statuses of one block has its events under the first.
-- +goose StatementBegin
CREATE FUNCTION pg_temp.outcome_place(receipt text, tx_height bigint) RETURNS bigint LANGUAGE sql STABLE STRICT
AS $$ SELECT (tx_index::bigint << 32) | outcome_index FROM execution_outcomes_ids
      WHERE id = receipt AND tx_block_height = tx_height ORDER BY tx_index, outcome_index LIMIT 1 $$;
-- +goose StatementEnd

DELETE FROM account_activity_ids
WHERE kind IN ('ft', 'nft', 'mt')
  AND (pg_temp.outcome_place(ref_id, source_height) IS NULL
       OR (pg_temp.outcome_place(ref_id, source_height) & 4294967295) >= 65536
       OR block_height - source_height NOT BETWEEN 0 AND 8388607
       OR (position >> 32) >= 256 OR (position & 4294967295) >= 65536);

-- The table is made anew, without source_height (below): a dropped
-- column would stay in every row's null bitmap (nine columns' instead of
-- eight's, a tuple header of 32 bytes instead of 24). PostgreSQL gives <<,
-- | and & one precedence, left to right: every term is in parentheses.
CREATE TABLE account_activity_places (
    account       integer NOT NULL,
    block_height  bigint NOT NULL,
    kind          activity_kind NOT NULL,
    ref           integer NOT NULL,
    position      bigint NOT NULL,
    other_account integer,
    contract      integer,
    amount        numeric(39,0)
);
INSERT INTO account_activity_places
SELECT account, block_height, kind,
       CASE WHEN kind IN ('ft', 'nft', 'mt') THEN (pg_temp.outcome_place(ref_id, source_height) >> 32)::integer
       ELSE 0 END,
       CASE WHEN kind IN ('ft', 'nft', 'mt')
       THEN ((block_height - source_height) << 40) | ((pg_temp.outcome_place(ref_id, source_height) & 4294967295) << 24)
            | ((position >> 32) << 16) | (position & 4294967295)
       ELSE position END,
       other_account, contract, amount
FROM account_activity_ids;
DROP TABLE account_activity_ids;
ALTER TABLE account_activity_places RENAME TO account_activity_ids;
ALTER TABLE account_activity_ids ADD CONSTRAINT account_activity_pkey
    PRIMARY KEY (account, block_height, kind, ref, position);

-- source_height, the block whose commit wrote the row, is block_height,
-- less a token row's delay: it is computed, in the view and in the BRIN
-- index a rewritten range's rows are deleted by (the store's statement
-- names the same expression).
CREATE INDEX account_activity_source_height_idx ON account_activity_ids USING brin
    ((CASE WHEN kind IN ('ft', 'nft', 'mt') THEN block_height - (position >> 40) ELSE block_height END));

-- The view: the columns of before. The receipt id is a subquery by key
-- (run only when ref_id is selected), the names outer joins on accounts'
-- key, as 00018 made them.
CREATE VIEW account_activity AS
SELECT a.name AS account_id, x.block_height, x.kind,
       CASE WHEN x.kind IN ('ft', 'nft', 'mt') THEN
         (SELECT e.id FROM execution_outcomes_ids e WHERE e.tx_block_height = x.block_height - (x.position >> 40)
            AND e.tx_index = x.ref AND e.outcome_index = ((x.position >> 24) & 65535)::integer)
       ELSE '' END AS ref_id,
       CASE WHEN x.kind IN ('ft', 'nft', 'mt') THEN (((x.position >> 16) & 255) << 32) | (x.position & 65535)
       ELSE x.position END AS position,
       CASE WHEN x.kind IN ('ft', 'nft', 'mt') THEN x.block_height - (x.position >> 40) ELSE x.block_height END
         AS source_height,
       o.name AS other_account_id, c.name AS contract_id, x.amount
FROM account_activity_ids x
LEFT JOIN accounts a ON a.id = x.account
LEFT JOIN accounts o ON o.id = x.other_account
LEFT JOIN accounts c ON c.id = x.contract;

-- +goose Down
DROP VIEW account_activity;

-- +goose StatementBegin
CREATE FUNCTION pg_temp.outcome_id(tx_height bigint, tx_index integer, outcome_index integer) RETURNS text
LANGUAGE sql STABLE STRICT
AS $$ SELECT e.id FROM execution_outcomes_ids e
      WHERE e.tx_block_height = tx_height AND e.tx_index = $2 AND e.outcome_index = $3 $$;
-- +goose StatementEnd

-- The table as 00018 left it, made anew.
CREATE TABLE account_activity_refs (
    account       integer NOT NULL,
    block_height  bigint NOT NULL,
    kind          activity_kind NOT NULL,
    ref_id        text NOT NULL,
    position      bigint NOT NULL,
    source_height bigint NOT NULL,
    other_account integer,
    contract      integer,
    amount        numeric(39,0)
);
INSERT INTO account_activity_refs
SELECT x.account, x.block_height, x.kind, r.ref_id, r.position, x.source_height, x.other_account, x.contract, x.amount
FROM (SELECT a.*, CASE WHEN a.kind IN ('ft', 'nft', 'mt') THEN a.block_height - (a.position >> 40) ELSE a.block_height END
             AS source_height FROM account_activity_ids a) x,
     LATERAL (SELECT CASE WHEN x.kind IN ('ft', 'nft', 'mt')
                     THEN pg_temp.outcome_id(x.source_height, x.ref, ((x.position >> 24) & 65535)::integer) ELSE '' END
                     AS ref_id,
                     CASE WHEN x.kind IN ('ft', 'nft', 'mt') THEN (((x.position >> 16) & 255) << 32) | (x.position & 65535)
                     ELSE x.position END AS position) r
WHERE r.ref_id IS NOT NULL; -- a token row whose outcome row is gone
DROP TABLE account_activity_ids;
ALTER TABLE account_activity_refs RENAME TO account_activity_ids;
ALTER TABLE account_activity_ids ADD CONSTRAINT account_activity_pkey
    PRIMARY KEY (account, block_height, kind, ref_id, position);
CREATE INDEX account_activity_source_height_idx ON account_activity_ids USING brin (source_height);

-- The view as 00018 made it.
CREATE VIEW account_activity AS
SELECT a.name AS account_id, x.block_height, x.kind, x.ref_id, x.position, x.source_height,
       o.name AS other_account_id, c.name AS contract_id, x.amount
FROM account_activity_ids x
LEFT JOIN accounts a ON a.id = x.account
LEFT JOIN accounts o ON o.id = x.other_account
LEFT JOIN accounts c ON c.id = x.contract;
