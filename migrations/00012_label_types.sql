-- +goose Up
-- Layout 3, second step (docs/database-layout3.md): the kinds and causes
-- that repeat on every row are enum types, 4 bytes on disk instead of a
-- text of 5 to 35 (a mainnet block has ~2,500 such values). They compare
-- with string literals as text did (`kind = 'FunctionCall'`), and sort as
-- their labels do in byte order. A label the upstream serves that a type
-- does not have yet (a newer nearcore's action, change or cause) is added
-- by the store, in its sorted place, before the commit that writes it.
-- The types start with the labels nearcore has today and every label the
-- archive already holds.

-- +goose StatementBegin
CREATE FUNCTION nearline_label_type(typ text, tbl text, col text, known text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    labels text;
BEGIN
    EXECUTE format('SELECT string_agg(quote_literal(l), '', '' ORDER BY l COLLATE "C")
                    FROM (SELECT unnest($1) UNION SELECT DISTINCT %I::text FROM %I) x(l)', col, tbl)
        INTO labels USING known;
    EXECUTE format('CREATE TYPE %I AS ENUM (%s)', typ, labels);
    EXECUTE format('ALTER TABLE %I ALTER COLUMN %I TYPE %I USING %I::text::%I', tbl, col, typ, col, typ);
END
$$;
-- +goose StatementEnd

SELECT nearline_label_type('action_kind', 'actions', 'kind', ARRAY['AddKey', 'CreateAccount', 'Delegate',
    'DeleteAccount', 'DeleteKey', 'DeployContract', 'DeployGlobalContract', 'DeployGlobalContractByAccountId',
    'FunctionCall', 'Stake', 'Transfer', 'UseGlobalContract', 'UseGlobalContractByAccountId']);
SELECT nearline_label_type('action_parent_kind', 'actions', 'parent_kind', ARRAY['receipt', 'transaction']);
SELECT nearline_label_type('receipt_kind', 'receipts', 'kind', ARRAY['Action', 'Data', 'GlobalContractDistribution']);
SELECT nearline_label_type('state_change_type', 'state_changes', 'change_type', ARRAY['access_key_deletion',
    'access_key_update', 'account_deletion', 'account_update', 'contract_code_deletion', 'contract_code_update',
    'data_deletion', 'data_update']);
SELECT nearline_label_type('state_change_cause', 'state_changes', 'cause_type', ARRAY['action_receipt_gas_reward',
    'action_receipt_processing_started', 'bandwidth_scheduler_state_update', 'initial_state', 'migration',
    'not_writable_to_disk', 'postponed_receipt', 'receipt_processing', 'resharding', 'transaction_processing',
    'updated_delayed_receipts', 'validator_accounts_update']);
SELECT nearline_label_type('activity_kind', 'account_activity', 'kind', ARRAY['balance', 'ft', 'mt', 'nft',
    'receipt', 'tx_receiver', 'tx_signer']);
DROP FUNCTION nearline_label_type(text, text, text, text[]);

-- +goose Down
ALTER TABLE account_activity ALTER COLUMN kind TYPE text;
ALTER TABLE state_changes ALTER COLUMN cause_type TYPE text, ALTER COLUMN change_type TYPE text;
ALTER TABLE receipts ALTER COLUMN kind TYPE text;
ALTER TABLE actions ALTER COLUMN parent_kind TYPE text, ALTER COLUMN kind TYPE text;
DROP TYPE activity_kind, state_change_cause, state_change_type, receipt_kind, action_parent_kind, action_kind;
