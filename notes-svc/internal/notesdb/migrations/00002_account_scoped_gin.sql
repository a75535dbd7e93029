-- +goose Up
-- A tag listing or a search names one account, but the GIN indexes of
-- 00001 index every account's notes together: a query for one account read
-- every tenant's matches and dropped the others', so its cost grew with the
-- number of tenants. GIN indexes that lead with account_id (btree_gin's
-- operator class for text; a trusted extension shipped with PostgreSQL)
-- intersect the account's posting list with the tag's or the words', so
-- the cost follows the account's own notes.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX notes_account_tags_idx ON notes USING gin (account_id, tags);
CREATE INDEX notes_account_search_idx ON notes USING gin (account_id, search);
DROP INDEX notes_tags_idx;
DROP INDEX notes_search_idx;

-- +goose Down
CREATE INDEX notes_search_idx ON notes USING gin (search);
CREATE INDEX notes_tags_idx ON notes USING gin (tags);
DROP INDEX notes_account_search_idx;
DROP INDEX notes_account_tags_idx;
-- btree_gin stays: other objects of the database may use it by now.
