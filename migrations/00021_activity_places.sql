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
-- It rewrites account_activity_ids and its primary key (stop `index` and
-- `serve`). A token row whose outcome row is gone, or whose place does not
-- fit the packing (the store writes no such row), is dropped.
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

-- Both expressions read the row as it was. PostgreSQL gives <<, | and &
-- one precedence, left to right: every term is in parentheses.
ALTER TABLE account_activity_ids
    ALTER COLUMN position TYPE bigint USING CASE WHEN kind IN ('ft', 'nft', 'mt')
        THEN ((block_height - source_height) << 40) | ((pg_temp.outcome_place(ref_id, source_height) & 4294967295) << 24)
             | ((position >> 32) << 16) | (position & 4294967295)
        ELSE position END,
    ALTER COLUMN ref_id TYPE integer USING CASE WHEN kind IN ('ft', 'nft', 'mt')
        THEN (pg_temp.outcome_place(ref_id, source_height) >> 32)::integer ELSE 0 END;
ALTER TABLE account_activity_ids RENAME COLUMN ref_id TO ref;

-- The view: the columns of before. The receipt id is a subquery by key
-- (run only when ref_id is selected), the names outer joins on accounts'
-- key, as 00018 made them.
CREATE VIEW account_activity AS
SELECT a.name AS account_id, x.block_height, x.kind,
       CASE WHEN x.kind IN ('ft', 'nft', 'mt') THEN
         (SELECT e.id FROM execution_outcomes_ids e WHERE e.tx_block_height = x.source_height AND e.tx_index = x.ref
            AND e.outcome_index = ((x.position >> 24) & 65535)::integer)
       ELSE '' END AS ref_id,
       CASE WHEN x.kind IN ('ft', 'nft', 'mt') THEN (((x.position >> 16) & 255) << 32) | (x.position & 65535)
       ELSE x.position END AS position,
       x.source_height, o.name AS other_account_id, c.name AS contract_id, x.amount
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

DELETE FROM account_activity_ids
WHERE kind IN ('ft', 'nft', 'mt') AND pg_temp.outcome_id(source_height, ref, ((position >> 24) & 65535)::integer) IS NULL;

ALTER TABLE account_activity_ids
    ALTER COLUMN ref TYPE text USING CASE WHEN kind IN ('ft', 'nft', 'mt')
        THEN pg_temp.outcome_id(source_height, ref, ((position >> 24) & 65535)::integer) ELSE '' END,
    ALTER COLUMN position TYPE bigint USING CASE WHEN kind IN ('ft', 'nft', 'mt')
        THEN (((position >> 16) & 255) << 32) | (position & 65535) ELSE position END;
ALTER TABLE account_activity_ids RENAME COLUMN ref TO ref_id;

-- The view as 00018 made it.
CREATE VIEW account_activity AS
SELECT a.name AS account_id, x.block_height, x.kind, x.ref_id, x.position, x.source_height,
       o.name AS other_account_id, c.name AS contract_id, x.amount
FROM account_activity_ids x
LEFT JOIN accounts a ON a.id = x.account
LEFT JOIN accounts o ON o.id = x.other_account
LEFT JOIN accounts c ON c.id = x.contract;
