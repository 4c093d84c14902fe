-- +goose Up
-- Global contracts (protocol 77+). Each GlobalContractDistribution receipt
-- a chunk carried: the code on its way to target_shard, named by its hash
-- or by the account that deployed it. The code itself is in contract_codes.
-- "The global code X on shard S at height H" is the newest distribution of
-- X to S carried at or below H whose target shard has had a chunk since
-- (the receipt executes at the target shard's next chunk).
CREATE TABLE global_contract_distributions (
    receipt_id      text PRIMARY KEY,
    block_height    bigint NOT NULL,        -- block whose chunk carried the receipt
    shard_id        integer NOT NULL,       -- the carrying chunk's shard
    index_in_chunk  integer NOT NULL,
    target_shard    integer NOT NULL,
    identifier_kind text NOT NULL,          -- 'code_hash' or 'account_id'
    identifier      text NOT NULL,          -- the code hash or the deploying account
    code_hash       text NOT NULL,          -- contract_codes.code_hash of the code carried
    deployer_id     text NOT NULL,          -- the receipt's predecessor
    nonce           bigint                  -- newer nearcore orders redeploys by it
);
CREATE INDEX global_contract_distributions_identifier_idx
    ON global_contract_distributions (identifier, target_shard, block_height);
CREATE INDEX global_contract_distributions_block_height_idx
    ON global_contract_distributions (block_height);

-- Which global code an account uses (NULL for local code or none): the
-- members a newer nearcore's AccountView carries, as typed columns for SQL.
-- extra still holds them as served.
ALTER TABLE account_history
    ADD COLUMN global_contract_hash text,
    ADD COLUMN global_contract_account_id text;
CREATE INDEX account_history_global_contract_hash_idx
    ON account_history (global_contract_hash) WHERE global_contract_hash IS NOT NULL;
CREATE INDEX account_history_global_contract_account_idx
    ON account_history (global_contract_account_id) WHERE global_contract_account_id IS NOT NULL;

-- +goose Down
DROP INDEX account_history_global_contract_account_idx;
DROP INDEX account_history_global_contract_hash_idx;
ALTER TABLE account_history DROP COLUMN global_contract_account_id, DROP COLUMN global_contract_hash;
DROP TABLE global_contract_distributions;
