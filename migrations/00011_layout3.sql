-- +goose Up
-- Layout 3 (docs/database-layout3.md): every payload served verbatim is kept
-- once, compressed; typed rows keep what SQL asks about and point into the
-- documents by position. Measured on real mainnet blocks, the JSON a row
-- repeated from its chunk (a Delegate's detail with its nested calls'
-- arguments, function call arguments) and the chunk views themselves (rows
-- under TOAST's threshold are never compressed, the larger ones with lz4
-- only) were half of the archive.
--
-- An archive written with layout 2 is converted in place: chunk documents
-- are written in format 0 (a JSON array holding the view, compressed by
-- TOAST), which the store reads as well; chunks indexed from then on get
-- zstd documents. Dropped columns free their space when a table is
-- rewritten (VACUUM FULL), not before.

-- A chunk's `chunk` result as served, in a packed document of one value
-- (internal/packed) instead of an uncompressed json column.
ALTER TABLE chunks ADD COLUMN doc bytea;
UPDATE chunks SET doc = '\x00'::bytea || convert_to('[' || view::text || ']', 'UTF8');
ALTER TABLE chunks ALTER COLUMN doc SET NOT NULL;
ALTER TABLE chunks DROP COLUMN view;

-- Rows name their chunk by (block_height, shard_id) and their parent by
-- (parent_kind, parent_index): the chunk hash and the parent's hash were
-- copies. A call's arguments and a Delegate's own members (nonce,
-- max_block_height, signature, and its nested actions, which have rows of
-- their own) are in the chunk's document, served by `chunk`.
ALTER TABLE transactions DROP COLUMN chunk_hash;
ALTER TABLE receipts DROP COLUMN chunk_hash;
ALTER TABLE actions DROP COLUMN chunk_hash, DROP COLUMN tx_hash, DROP COLUMN receipt_id, DROP COLUMN args;
UPDATE actions SET detail = NULL WHERE kind = 'Delegate' AND detail IS NOT NULL;

-- A state change's cause transaction, public key and data key are in the
-- block's changes document (the data key in contract_data_history too);
-- cause_receipt_hash stays for account bases.
ALTER TABLE state_changes DROP COLUMN cause_tx_hash, DROP COLUMN public_key, DROP COLUMN data_key;

-- A block's EXPERIMENTAL_changes_in_block entries, in upstream order, as one
-- JSON array in a packed document beside its changes, instead of a row each.
ALTER TABLE block_changes ADD COLUMN effects bytea;
INSERT INTO block_changes (block_height, changes)
SELECT DISTINCT e.block_height, '\x005b5d'::bytea FROM block_effects e
WHERE NOT EXISTS (SELECT 1 FROM block_changes c WHERE c.block_height = e.block_height);
UPDATE block_changes c SET effects = '\x00'::bytea || convert_to('[' || e.list || ']', 'UTF8')
FROM (SELECT block_height,
             json_agg(json_build_object('type', effect_type, 'account_id', account_id) ORDER BY index_in_block)::text AS list
      FROM block_effects GROUP BY block_height) e
WHERE e.block_height = c.block_height;
DROP TABLE block_effects;

-- Documents the store writes are zstd already: TOAST stores them out of
-- line as they are instead of trying to compress them again (CPU spent for
-- nothing). Set after the conversions above, whose format-0 documents stay
-- compressed by TOAST.
ALTER TABLE chunks ALTER COLUMN doc SET STORAGE EXTERNAL;
ALTER TABLE block_changes ALTER COLUMN changes SET STORAGE EXTERNAL, ALTER COLUMN effects SET STORAGE EXTERNAL;
ALTER TABLE block_tx_statuses ALTER COLUMN statuses SET STORAGE EXTERNAL;

-- Indexes no query of the archive or of the documented examples uses:
-- receipts and outcomes of an account are found through account_activity.
DROP INDEX receipts_receiver_idx, receipts_predecessor_idx, execution_outcomes_executor_idx,
    actions_method_idx, actions_delegated_by_idx, actions_delegate_sender_idx;

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    RAISE EXCEPTION 'layout 3 cannot be migrated down: re-index into a database migrated to version 10';
END
$$;
-- +goose StatementEnd
