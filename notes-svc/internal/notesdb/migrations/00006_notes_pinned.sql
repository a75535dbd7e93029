-- +goose Up
-- A pinned note is one its client keeps on top (a favorite). Adding a
-- column with a constant default rewrites no row.
ALTER TABLE notes ADD COLUMN pinned boolean NOT NULL DEFAULT false;
-- Serves sort=-pinned,-updated_at (and its reverse) for one account, as
-- the other sorts' indexes do.
CREATE INDEX notes_account_pinned_updated_idx ON notes (account_id, pinned, updated_at, id);

-- +goose Down
DROP INDEX notes_account_pinned_updated_idx;
ALTER TABLE notes DROP COLUMN pinned;
