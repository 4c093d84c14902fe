-- Nearline schema. Conventions: heights bigint, hashes and account ids text
-- (base58 / NEAR account ids), yoctoNEAR amounts numeric(39,0), timestamps as
-- nanoseconds (bigint) and as timestamptz, and `view` columns holding the
-- JSON exactly as the upstream node served it, so reads are byte-faithful.

-- +goose Up

-- The indexer's cursor: the last committed block. Data and cursor commit in
-- one transaction.
CREATE TABLE indexer_cursor (
    name        text PRIMARY KEY,
    height      bigint NOT NULL,
    hash        text NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE blocks (
    height            bigint PRIMARY KEY,
    hash              text NOT NULL UNIQUE,
    prev_hash         text NOT NULL,
    prev_height       bigint,
    epoch_id          text NOT NULL,
    author            text NOT NULL,
    timestamp_nanos   bigint NOT NULL,
    block_time        timestamptz NOT NULL,
    gas_price         numeric(39,0) NOT NULL,
    total_supply      numeric(39,0) NOT NULL,
    protocol_version  integer NOT NULL,
    chunks_included   integer NOT NULL,
    view              json NOT NULL
);
CREATE INDEX blocks_time_idx ON blocks (block_time);

-- Heights between two committed blocks where the chain produced no block.
CREATE TABLE skipped_heights (
    height      bigint PRIMARY KEY,
    next_height bigint NOT NULL
);
CREATE INDEX skipped_heights_next_height_idx ON skipped_heights (next_height);

-- One row per shard per block: which chunk the block carries for the shard
-- (a missing chunk repeats an older chunk, whose height_included lags).
CREATE TABLE block_chunks (
    block_height    bigint NOT NULL,
    shard_id        integer NOT NULL,
    chunk_hash      text NOT NULL,
    height_included bigint NOT NULL,
    PRIMARY KEY (block_height, shard_id)
);

-- Chunks new in their block (height_included = block height).
CREATE TABLE chunks (
    chunk_hash      text PRIMARY KEY,
    block_height    bigint NOT NULL,
    shard_id        integer NOT NULL,
    author          text NOT NULL,
    height_created  bigint NOT NULL,
    gas_used        bigint NOT NULL,
    gas_limit       bigint NOT NULL,
    balance_burnt   numeric(39,0) NOT NULL,
    tx_count        integer NOT NULL,
    receipt_count   integer NOT NULL,
    view            json NOT NULL
);
CREATE INDEX chunks_block_height_idx ON chunks (block_height, shard_id);

-- Transactions as included in chunks. Hashes are not unique on mainnet, so
-- the key is the position in the chunk.
CREATE TABLE transactions (
    chunk_hash      text NOT NULL,
    index_in_chunk  integer NOT NULL,
    hash            text NOT NULL,
    block_height    bigint NOT NULL,
    shard_id        integer NOT NULL,
    signer_id       text NOT NULL,
    public_key      text NOT NULL,
    nonce           numeric(20,0) NOT NULL,
    receiver_id     text NOT NULL,
    priority_fee    numeric(20,0) NOT NULL,
    action_count    integer NOT NULL,
    PRIMARY KEY (chunk_hash, index_in_chunk)
);
CREATE INDEX transactions_hash_idx ON transactions (hash);
CREATE INDEX transactions_signer_idx ON transactions (signer_id, block_height);
CREATE INDEX transactions_receiver_idx ON transactions (receiver_id, block_height);
CREATE INDEX transactions_block_height_idx ON transactions (block_height);

-- Receipts as included in chunks.
CREATE TABLE receipts (
    chunk_hash      text NOT NULL,
    index_in_chunk  integer NOT NULL,
    receipt_id      text NOT NULL,
    block_height    bigint NOT NULL,
    shard_id        integer NOT NULL,
    predecessor_id  text NOT NULL,
    receiver_id     text NOT NULL,
    kind            text NOT NULL,          -- 'Action' or 'Data'
    signer_id       text,                   -- action receipts only
    PRIMARY KEY (chunk_hash, index_in_chunk)
);
CREATE INDEX receipts_receipt_id_idx ON receipts (receipt_id);
CREATE INDEX receipts_receiver_idx ON receipts (receiver_id, block_height);
CREATE INDEX receipts_predecessor_idx ON receipts (predecessor_id, block_height);
CREATE INDEX receipts_block_height_idx ON receipts (block_height);

-- Actions of transactions (receipt_id NULL) and of action receipts.
CREATE TABLE actions (
    chunk_hash      text NOT NULL,
    parent_kind     text NOT NULL,          -- 'transaction' or 'receipt'
    parent_index    integer NOT NULL,       -- index_in_chunk of the parent
    action_index    integer NOT NULL,
    block_height    bigint NOT NULL,
    tx_hash         text,
    receipt_id      text,
    kind            text NOT NULL,          -- CreateAccount, Transfer, FunctionCall, ...
    method_name     text,
    gas             bigint,
    deposit         numeric(39,0),
    public_key      text,
    beneficiary_id  text,
    args            bytea,
    detail          json NOT NULL,          -- the action exactly as served
    PRIMARY KEY (chunk_hash, parent_kind, parent_index, action_index)
);
CREATE INDEX actions_method_idx ON actions (method_name) WHERE method_name IS NOT NULL;
CREATE INDEX actions_block_height_idx ON actions (block_height);

-- Execution outcomes of transactions and receipts (from tx status).
CREATE TABLE execution_outcomes (
    id              text NOT NULL,          -- tx hash or receipt id
    block_hash      text NOT NULL,
    block_height    bigint NOT NULL,
    executor_id     text NOT NULL,
    gas_burnt       bigint NOT NULL,
    tokens_burnt    numeric(39,0) NOT NULL,
    status          json NOT NULL,
    tx_hash         text NOT NULL,          -- the transaction whose status listed it
    tx_block_height bigint NOT NULL,        -- height of the block including that tx
    view            json NOT NULL,
    PRIMARY KEY (id, block_hash)
);
CREATE INDEX execution_outcomes_executor_idx ON execution_outcomes (executor_id, block_height);
CREATE INDEX execution_outcomes_block_height_idx ON execution_outcomes (block_height);
CREATE INDEX execution_outcomes_tx_block_height_idx ON execution_outcomes (tx_block_height);
CREATE INDEX execution_outcomes_tx_hash_idx ON execution_outcomes (tx_hash);

-- Final tx status results (EXPERIMENTAL_tx_status) of indexed transactions.
CREATE TABLE transaction_statuses (
    tx_hash         text NOT NULL,
    signer_id       text NOT NULL,
    block_height    bigint NOT NULL,        -- height of the block including the tx
    final_execution_status text NOT NULL,   -- FINAL, EXECUTED, ... as the upstream said
    view            json NOT NULL,
    PRIMARY KEY (tx_hash, signer_id)
);
CREATE INDEX transaction_statuses_block_height_idx ON transaction_statuses (block_height);

-- Every state change of every block, in the order the upstream listed it.
CREATE TABLE state_changes (
    block_height    bigint NOT NULL,
    index_in_block  integer NOT NULL,
    account_id      text NOT NULL,
    change_type     text NOT NULL,          -- account_update, data_deletion, ...
    cause_type      text NOT NULL,          -- transaction_processing, receipt_processing, ...
    cause_tx_hash   text,
    cause_receipt_hash text,
    public_key      text,
    data_key        bytea,
    view            json NOT NULL,
    PRIMARY KEY (block_height, index_in_block)
);
CREATE INDEX state_changes_account_idx ON state_changes (account_id, block_height);
CREATE INDEX state_changes_cause_tx_idx ON state_changes (cause_tx_hash) WHERE cause_tx_hash IS NOT NULL;
CREATE INDEX state_changes_cause_receipt_idx ON state_changes (cause_receipt_hash) WHERE cause_receipt_hash IS NOT NULL;

-- block_effects / EXPERIMENTAL_changes_in_block, in upstream order.
CREATE TABLE block_effects (
    block_height    bigint NOT NULL,
    index_in_block  integer NOT NULL,
    account_id      text NOT NULL,
    effect_type     text NOT NULL,
    PRIMARY KEY (block_height, index_in_block)
);

-- State history: one row per (key, block) holding the value after the block;
-- deleted = true marks a deletion. "Value at height H" is the newest row with
-- block_height <= H.
CREATE TABLE account_history (
    account_id      text NOT NULL,
    block_height    bigint NOT NULL,
    deleted         boolean NOT NULL,
    amount          numeric(39,0),
    locked          numeric(39,0),
    code_hash       text,
    storage_usage   bigint,
    storage_paid_at bigint,
    PRIMARY KEY (account_id, block_height)
);

CREATE TABLE access_key_history (
    account_id      text NOT NULL,
    public_key      text NOT NULL,
    block_height    bigint NOT NULL,
    deleted         boolean NOT NULL,
    nonce           numeric(20,0),
    permission      json,
    PRIMARY KEY (account_id, public_key, block_height)
);

CREATE TABLE contract_data_history (
    account_id      text NOT NULL,
    data_key        bytea NOT NULL,
    block_height    bigint NOT NULL,
    deleted         boolean NOT NULL,
    value           bytea,
    PRIMARY KEY (account_id, data_key, block_height)
);

CREATE TABLE contract_code_history (
    account_id      text NOT NULL,
    block_height    bigint NOT NULL,
    deleted         boolean NOT NULL,
    code_hash       text,
    PRIMARY KEY (account_id, block_height)
);

-- Contract code, once per code hash.
CREATE TABLE contract_codes (
    code_hash       text PRIMARY KEY,
    code            bytea NOT NULL
);

-- The archive's chain: genesis config and protocol configs per version.
CREATE TABLE chain_config (
    name            text PRIMARY KEY,       -- 'genesis_config'
    view            json NOT NULL
);

CREATE TABLE protocol_configs (
    protocol_version integer PRIMARY KEY,
    first_height     bigint NOT NULL,       -- lowest indexed height seen with it
    view             json NOT NULL
);

-- The protocol version of each epoch seen (EXPERIMENTAL_protocol_config is
-- per epoch): "config at height H" is blocks -> epoch_protocol_versions ->
-- protocol_configs.
CREATE TABLE epoch_protocol_versions (
    epoch_id         text PRIMARY KEY,
    protocol_version integer NOT NULL
);

-- Where state history starts: the genesis height when genesis records were
-- loaded, or the start height of a snapshot (one row).
CREATE TABLE history_start (
    singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    height           bigint NOT NULL,
    source           text NOT NULL          -- 'genesis' or 'snapshot'
);

-- Large JSON and code values compress with lz4 where the server supports it
-- (much faster to write than the default pglz); elsewhere the default stays.
-- +goose StatementBegin
DO $$
BEGIN
    ALTER TABLE blocks ALTER COLUMN view SET COMPRESSION lz4;
    ALTER TABLE chunks ALTER COLUMN view SET COMPRESSION lz4;
    ALTER TABLE actions ALTER COLUMN detail SET COMPRESSION lz4;
    ALTER TABLE actions ALTER COLUMN args SET COMPRESSION lz4;
    ALTER TABLE execution_outcomes ALTER COLUMN view SET COMPRESSION lz4;
    ALTER TABLE transaction_statuses ALTER COLUMN view SET COMPRESSION lz4;
    ALTER TABLE state_changes ALTER COLUMN view SET COMPRESSION lz4;
    ALTER TABLE contract_codes ALTER COLUMN code SET COMPRESSION lz4;
    ALTER TABLE contract_data_history ALTER COLUMN value SET COMPRESSION lz4;
    ALTER TABLE protocol_configs ALTER COLUMN view SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value OR syntax_error THEN
    RAISE NOTICE 'lz4 compression not available, keeping the default';
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP TABLE history_start, epoch_protocol_versions, protocol_configs, chain_config, contract_codes, contract_code_history,
    contract_data_history, access_key_history, account_history, block_effects,
    state_changes, transaction_statuses, execution_outcomes, actions, receipts,
    transactions, chunks, block_chunks, skipped_heights, blocks, indexer_cursor;
