-- +goose Up
-- Per-account bases: the height from which an account's whole state (account,
-- access keys, code, data) is in the history tables, for archives whose
-- history does not start at genesis. source: 'snapshot' (fetched at the
-- start height by --snapshot-accounts), 'creation' (created by a receipt the
-- archive indexed) or 'deletion' (deleted in an indexed block, every key
-- removed with it). An account is complete at height H when its base is <= H.
CREATE TABLE account_bases (
    account_id      text PRIMARY KEY,
    height          bigint NOT NULL,
    source          text NOT NULL
);

-- Archives indexed before this migration: the same rules as
-- store.recordBasesSQL, over every stored block.
INSERT INTO account_bases (account_id, height, source)
SELECT DISTINCT ON (account_id) account_id, block_height, source FROM (
    SELECT sc.account_id, sc.block_height, 'creation' AS source
    FROM state_changes sc
    JOIN receipts r ON r.receipt_id = sc.cause_receipt_hash AND r.receiver_id = sc.account_id
    WHERE sc.change_type = 'account_update' AND sc.cause_type = 'receipt_processing'
      AND (EXISTS (SELECT 1 FROM actions a
                   WHERE a.chunk_hash = r.chunk_hash AND a.parent_kind = 'receipt'
                     AND a.parent_index = r.index_in_chunk AND a.kind = 'CreateAccount')
           OR (r.predecessor_id <> 'system'
               AND (sc.account_id ~ '^[0-9a-f]{64}$' OR sc.account_id ~ '^0x[0-9a-f]{40}$')
               AND NOT EXISTS (SELECT 1 FROM actions a
                           WHERE a.chunk_hash = r.chunk_hash AND a.parent_kind = 'receipt'
                             AND a.parent_index = r.index_in_chunk AND a.kind <> 'Transfer')
               AND EXISTS (SELECT 1 FROM state_changes k
                           WHERE k.block_height = sc.block_height AND k.account_id = sc.account_id
                             AND k.cause_receipt_hash = sc.cause_receipt_hash
                             AND k.change_type IN ('access_key_update', 'contract_code_update'))))
    UNION ALL
    SELECT sc.account_id, sc.block_height, 'deletion'
    FROM state_changes sc
    WHERE sc.change_type = 'account_deletion'
) found
ORDER BY account_id, block_height
ON CONFLICT (account_id) DO UPDATE
SET height = EXCLUDED.height, source = EXCLUDED.source
WHERE EXCLUDED.height < account_bases.height;

-- +goose Down
DROP TABLE account_bases;
