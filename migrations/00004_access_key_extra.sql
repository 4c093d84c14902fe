-- +goose Up
-- The members of an access key that the upstream served beyond nonce and
-- permission (a newer nearcore's gas key info, say), as a JSON object in
-- their order, so view_access_key and view_access_key_list answer the key as
-- it came. NULL when there were none: a NULL costs one bit of the row's null
-- bitmap, nothing for the millions of keys of today's chain.
ALTER TABLE access_key_history ADD COLUMN extra json;

-- +goose Down
ALTER TABLE access_key_history DROP COLUMN extra;
