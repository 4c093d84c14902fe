-- +goose Up
-- Split backfills: several indexers fill disjoint height ranges of one
-- archive, each on its own indexer_cursor row (`nearline index --cursor
-- NAME`). A row is one range: every height from first_height to height is
-- a stored block or a recorded skipped height, and height/hash is its last
-- block. Ranges that meet are joined by the continuity check of the commit
-- that makes them meet (store.Write); the server answers heights inside
-- ranges only, and state only where the ranges below are in.
ALTER TABLE indexer_cursor ADD COLUMN first_height bigint;

-- The one range of an archive indexed before this migration starts at its
-- lowest block or skipped height.
UPDATE indexer_cursor SET first_height = coalesce(
    (SELECT least((SELECT min(height) FROM blocks), (SELECT min(height) FROM skipped_heights))),
    height);

ALTER TABLE indexer_cursor ALTER COLUMN first_height SET NOT NULL,
    ADD CONSTRAINT indexer_cursor_range_check CHECK (first_height <= height);

-- +goose Down
ALTER TABLE indexer_cursor DROP CONSTRAINT indexer_cursor_range_check, DROP COLUMN first_height;
