-- +goose Up
-- Explorer tables (README, "Token events and account activity"): the token
-- events of NEP-297 `EVENT_JSON:` logs of successful receipt outcomes, one
-- row per affected account, and every account's activity in one index.
--
-- The event tables go with the transaction whose status listed the outcome,
-- as execution_outcomes does: range-partitioned by tx_block_height, and
-- rewritten with it. block_height is where the receipt executed.
-- block_time is that block's time; NULL only while that block is not
-- committed yet (a receipt executed after the batch that wrote the row):
-- the commit that writes the block fills it in (the *_untimed indexes find
-- such rows).

CREATE TABLE ft_events (
    tx_block_height   bigint NOT NULL,
    receipt_id        text NOT NULL,
    log_index         integer NOT NULL,
    event_index       integer NOT NULL,
    block_height      bigint NOT NULL,
    block_time        timestamptz,
    tx_hash           text NOT NULL,
    contract_id       text NOT NULL,
    standard          text NOT NULL,
    version           text NOT NULL,
    event             text NOT NULL,
    item_index        integer NOT NULL,
    account_id        text NOT NULL,
    other_account_id  text,
    delta_amount      numeric(39,0) NOT NULL,
    memo              text,
    PRIMARY KEY (tx_block_height, receipt_id, log_index, event_index)
) PARTITION BY RANGE (tx_block_height);
CREATE INDEX ft_events_account_idx ON ft_events (account_id, block_height, receipt_id, log_index, event_index);
CREATE INDEX ft_events_contract_account_idx ON ft_events (contract_id, account_id, block_height);
CREATE INDEX ft_events_untimed_idx ON ft_events (block_height) WHERE block_time IS NULL;

CREATE TABLE nft_events (
    tx_block_height   bigint NOT NULL,
    receipt_id        text NOT NULL,
    log_index         integer NOT NULL,
    event_index       integer NOT NULL,
    block_height      bigint NOT NULL,
    block_time        timestamptz,
    tx_hash           text NOT NULL,
    contract_id       text NOT NULL,
    standard          text NOT NULL,
    version           text NOT NULL,
    event             text NOT NULL,
    item_index        integer NOT NULL,
    token_index       integer NOT NULL,
    token_id          text NOT NULL,
    account_id        text NOT NULL,
    other_account_id  text,
    delta_amount      smallint NOT NULL,
    authorized_id     text,
    memo              text,
    PRIMARY KEY (tx_block_height, receipt_id, log_index, event_index)
) PARTITION BY RANGE (tx_block_height);
CREATE INDEX nft_events_account_idx ON nft_events (account_id, block_height, receipt_id, log_index, event_index);
CREATE INDEX nft_events_contract_token_idx ON nft_events (contract_id, token_id, block_height);
CREATE INDEX nft_events_untimed_idx ON nft_events (block_height) WHERE block_time IS NULL;

CREATE TABLE mt_events (
    tx_block_height   bigint NOT NULL,
    receipt_id        text NOT NULL,
    log_index         integer NOT NULL,
    event_index       integer NOT NULL,
    block_height      bigint NOT NULL,
    block_time        timestamptz,
    tx_hash           text NOT NULL,
    contract_id       text NOT NULL,
    standard          text NOT NULL,
    version           text NOT NULL,
    event             text NOT NULL,
    item_index        integer NOT NULL,
    token_index       integer NOT NULL,
    token_id          text NOT NULL,
    account_id        text NOT NULL,
    other_account_id  text,
    delta_amount      numeric(39,0) NOT NULL,
    authorized_id     text,
    memo              text,
    PRIMARY KEY (tx_block_height, receipt_id, log_index, event_index)
) PARTITION BY RANGE (tx_block_height);
CREATE INDEX mt_events_account_idx ON mt_events (account_id, block_height, receipt_id, log_index, event_index);
CREATE INDEX mt_events_contract_token_idx ON mt_events (contract_id, token_id, account_id, block_height);
CREATE INDEX mt_events_untimed_idx ON mt_events (block_height) WHERE block_time IS NULL;

-- An existing archive gets the event tables' partitions for the ranges it
-- holds (the store creates those of new ranges).
-- +goose StatementBegin
DO $$
DECLARE
    size bigint;
    lo   bigint;
    hi   bigint;
    b    bigint;
    t    text;
BEGIN
    SELECT p.size INTO size FROM height_partitioning p;
    SELECT min(height), max(height) INTO lo, hi FROM blocks;
    IF lo IS NULL THEN
        RETURN;
    END IF;
    FOREACH t IN ARRAY ARRAY['ft_events', 'nft_events', 'mt_events'] LOOP
        b := lo - lo % size;
        WHILE b <= hi + size LOOP
            EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%s) TO (%s)',
                t || '_h' || lpad(b::text, 12, '0'), t, b, b + size);
            b := b + size;
        END LOOP;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- Everything that touched an account, newest first, in one index range
-- scan of the primary key: keyed by account, not partitioned (like the
-- state history tables). source_height is the block whose commit wrote
-- the row (for token events, their transaction's block): a re-indexed
-- range deletes its rows by it.
CREATE TABLE account_activity (
    account_id        text NOT NULL,
    block_height      bigint NOT NULL,
    kind              text NOT NULL,
    ref_id            text NOT NULL,
    position          bigint NOT NULL,
    source_height     bigint NOT NULL,
    other_account_id  text,
    contract_id       text,
    amount            numeric(39,0),
    PRIMARY KEY (account_id, block_height, kind, ref_id, position)
);
CREATE INDEX account_activity_source_height_idx ON account_activity USING brin (source_height);

-- +goose Down
DROP TABLE account_activity;
DROP TABLE mt_events;
DROP TABLE nft_events;
DROP TABLE ft_events;
