-- +goose Up
-- The keyed search index of 00002 answers a query from the account's own
-- posting lists only when the query names a word a match must hold. A
-- query that matches a note without any of its words (a negation such as
-- "-alpha" or -"alpha bravo", or "delta or -alpha") gives GIN no such
-- word, so it scans the whole index and hands over every note of every
-- account for the recheck: one tenant's search read the whole table
-- (200,005 rows for 5 results at 200,000 notes of others, under the
-- generic plan the service runs).
--
-- So each note's keys also hold one key of its account alone, the bare
-- account prefix (no lexeme is empty, so it never equals a keyed lexeme),
-- and every keyed query is ANDed with it: the scan always has the
-- account's posting list to start from, and a query without a required
-- word reads the account's notes, never another's. A query with a word
-- still reads only that word's keyed postings (GIN skips through the
-- account's list to them).
--
-- A query of stop words alone is empty and matches nothing; it stays
-- empty, so that its scan reads nothing, instead of the account's notes.
-- +goose StatementBegin
CREATE FUNCTION notes_account_search_keys(account_id text, search tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN notes_search_keys(account_id, search) || array_to_tsvector(ARRAY[notes_account_prefix(account_id)]);
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION notes_account_search_keys(account_id text, query tsquery) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE WHEN numnode(query) = 0 THEN query
        ELSE ('''' || notes_account_prefix(account_id) || '''')::tsquery && notes_search_keys(account_id, query) END;
-- +goose StatementEnd

DROP INDEX notes_account_search_idx;
CREATE INDEX notes_account_search_idx ON notes USING gin (notes_account_search_keys(account_id, search));

-- +goose Down
DROP INDEX notes_account_search_idx;
CREATE INDEX notes_account_search_idx ON notes USING gin (notes_search_keys(account_id, search));
DROP FUNCTION notes_account_search_keys(text, tsquery);
DROP FUNCTION notes_account_search_keys(text, tsvector);
