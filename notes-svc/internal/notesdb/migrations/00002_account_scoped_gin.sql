-- +goose Up
-- A tag listing or a search names one account, but the GIN indexes of
-- 00001 index every account's notes together: a query for one account read
-- every tenant's matches and dropped the others', so its cost grew with the
-- number of tenants.
--
-- Leading the GIN indexes with account_id (btree_gin) is not enough: the
-- scan intersects the account's short posting list with the tag's or the
-- word's, which holds every tenant's notes. One account's notes lie all
-- over the table, so the intersection still walks most leaves of that
-- posting tree (5 index buffers at 100 accounts, 37 at 5,000 for
-- tag=research; about twice the database time per listing).
--
-- So each key carries the account instead: the indexes hold
-- "<account prefix>:<tag>" and "<account prefix>:<lexeme>", and a key's
-- posting list holds only that account's notes. Listings and counts
-- (notesdb.noteFilter) match the same expressions, with the plain
-- account_id, tags and search conditions beside them, which stay the
-- definition of the result.
--
-- notes_account_prefix is a 64-bit hash of the account id in hex: short,
-- fixed-length, and with no character that needs escaping in a tsvector's
-- text form. Two accounts that share a prefix only share posting lists;
-- account_id = $1 still decides.
--
-- The functions every write evaluates are single expressions, which the
-- planner inlines: a SQL function with a subquery goes through the SQL
-- function executor on every statement, and halved the insert rate.
-- +goose StatementBegin
CREATE FUNCTION notes_account_prefix(account_id text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN to_hex(hashtextextended(account_id, 0)) || ':';
-- +goose StatementEnd

-- The tags joined with a control character, which no tag holds (the
-- domain refuses them), and split again.
-- +goose StatementBegin
CREATE FUNCTION notes_tag_keys(account_id text, tags text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE WHEN cardinality(tags) = 0 THEN '{}'::text[]
        ELSE string_to_array(notes_account_prefix(account_id)
            || array_to_string(tags, E'\x1f' || notes_account_prefix(account_id)), E'\x1f') END;
-- +goose StatementEnd

-- The vector's lexemes renamed through its text form, where every lexeme
-- opens with a quote after a space or at the start (the default parser
-- never puts whitespace in a lexeme, so " '" occurs nowhere else); weights
-- and positions stay.
-- +goose StatementBegin
CREATE FUNCTION notes_prefix_lexemes(account_id text, search tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN substr(replace(' ' || search::text, ' ''', ' ''' || notes_account_prefix(account_id)), 2)::tsvector;
-- +goose StatementEnd

-- notes_long_lexemes are the lexemes that the prefix would take past the
-- 2,046-byte limit of a lexeme. The keys leave them out: a query's lexemes
-- are shorter (notes.MaxQueryChars), so none could match them.
-- +goose StatementBegin
CREATE FUNCTION notes_long_lexemes(search tsvector) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN ARRAY(SELECT l FROM unnest(tsvector_to_array(search)) l WHERE octet_length(l) > 2000);
-- +goose StatementEnd

-- Only a vector with an entry of 255 characters or more can hold such a
-- lexeme (2,000 bytes are at least 500 characters); the others, nearly
-- all, skip the subquery.
-- +goose StatementBegin
CREATE FUNCTION notes_search_keys(account_id text, search tsvector) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE WHEN search::text !~ '[^ ]{255}' THEN notes_prefix_lexemes(account_id, search)
        ELSE notes_prefix_lexemes(account_id, ts_delete(search, notes_long_lexemes(search))) END;
-- +goose StatementEnd

-- The query's lexemes renamed the same way. A query's lexeme may follow
-- "!" or "(" and contain them, so each quoted lexeme is matched whole
-- (inside one, a quote is always doubled). The renaming is one-to-one for
-- an account, so a note matches the renamed query exactly when it matches
-- the query.
-- +goose StatementBegin
CREATE FUNCTION notes_search_keys(account_id text, query tsquery) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN regexp_replace(query::text, '''((?:[^'']|'''')*)''',
        '''' || notes_account_prefix(account_id) || '\1''', 'g')::tsquery;
-- +goose StatementEnd

CREATE INDEX notes_account_tags_idx ON notes USING gin (notes_tag_keys(account_id, tags));
CREATE INDEX notes_account_search_idx ON notes USING gin (notes_search_keys(account_id, search));
DROP INDEX notes_tags_idx;
DROP INDEX notes_search_idx;

-- +goose Down
CREATE INDEX notes_search_idx ON notes USING gin (search);
CREATE INDEX notes_tags_idx ON notes USING gin (tags);
DROP INDEX notes_account_search_idx;
DROP INDEX notes_account_tags_idx;
DROP FUNCTION notes_search_keys(text, tsquery);
DROP FUNCTION notes_search_keys(text, tsvector);
DROP FUNCTION notes_long_lexemes(tsvector);
DROP FUNCTION notes_prefix_lexemes(text, tsvector);
DROP FUNCTION notes_tag_keys(text, text[]);
DROP FUNCTION notes_account_prefix(text);
