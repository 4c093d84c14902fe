-- +goose Up
-- Meta-transactions (NEP-366). A relayer's transaction (and the receipt it
-- becomes, relayer -> user) carries one Delegate action: the user's signed
-- delegate action with its nested actions. The Delegate row and one row per
-- nested action (action_index after the parent's own actions) say who paid
-- and who acted:
--   delegated_by          the relayer: the transaction's or receipt's signer,
--                         who prepaid gas and deposits
--   delegate_sender_id    the user who signed the delegate action and acts
--   delegate_parent_index on a nested action's row, the action_index of its
--                         Delegate row (NULL on every other row)
ALTER TABLE actions ADD COLUMN delegate_parent_index integer,
    ADD COLUMN delegated_by text,
    ADD COLUMN delegate_sender_id text;

-- Delegate actions indexed before this migration were kept as served in
-- detail: their rows learn the relayer and the user (their nested actions
-- get rows only when their block is indexed again).
UPDATE actions a SET delegated_by = coalesce(t.signer_id, r.signer_id),
    delegate_sender_id = a.detail -> 'Delegate' -> 'delegate_action' ->> 'sender_id'
FROM actions x
LEFT JOIN transactions t ON x.parent_kind = 'transaction' AND t.block_height = x.block_height
    AND t.shard_id = x.shard_id AND t.index_in_chunk = x.parent_index
LEFT JOIN receipts r ON x.parent_kind = 'receipt' AND r.block_height = x.block_height
    AND r.shard_id = x.shard_id AND r.index_in_chunk = x.parent_index
WHERE a.kind = 'Delegate' AND x.kind = 'Delegate'
  AND x.block_height = a.block_height AND x.shard_id = a.shard_id AND x.parent_kind = a.parent_kind
  AND x.parent_index = a.parent_index AND x.action_index = a.action_index;

CREATE INDEX actions_delegated_by_idx ON actions (delegated_by, block_height) WHERE delegated_by IS NOT NULL;
CREATE INDEX actions_delegate_sender_idx ON actions (delegate_sender_id, block_height) WHERE delegate_sender_id IS NOT NULL;

-- +goose Down
DROP INDEX actions_delegate_sender_idx;
DROP INDEX actions_delegated_by_idx;
ALTER TABLE actions DROP COLUMN delegate_sender_id, DROP COLUMN delegated_by, DROP COLUMN delegate_parent_index;
