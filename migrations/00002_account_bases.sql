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

-- +goose Down
DROP TABLE account_bases;
