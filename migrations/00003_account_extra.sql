-- +goose Up
-- The members of an account that the upstream served beyond the modelled
-- columns (a newer nearcore's global_contract_hash and
-- global_contract_account_id, say), as a JSON object in their order, so
-- view_account answers them as they came. NULL when there were none, which
-- costs nothing for the accounts of today's chain.
ALTER TABLE account_history ADD COLUMN extra json;

-- +goose Down
ALTER TABLE account_history DROP COLUMN extra;
