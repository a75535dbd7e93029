-- +goose Up
CREATE TABLE accounts (
    id         text        PRIMARY KEY,
    name       text        NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Only the SHA-256 of a key is stored; hint is "tdn_…abcd" for listings.
CREATE TABLE api_keys (
    id           text        PRIMARY KEY,
    account_id   text        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    hash         bytea       NOT NULL UNIQUE CHECK (length(hash) = 32),
    hint         text        NOT NULL,
    scopes       text[]      NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    revoked_at   timestamptz,
    last_used_at timestamptz
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id);

CREATE TABLE notes (
    id         text        PRIMARY KEY,
    account_id text        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    title      text        NOT NULL,
    content    text        NOT NULL,
    tags       text[]      NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    -- version is the ETag source: it grows by one on every write.
    version    bigint      NOT NULL DEFAULT 1 CHECK (version > 0),
    -- The title weighs more than the content in ranking. 'english' stems
    -- words (notes matches note); other scripts are still indexed by token.
    search     tsvector    GENERATED ALWAYS AS (
        setweight(to_tsvector('english', title), 'A') ||
        setweight(to_tsvector('english', content), 'B')
    ) STORED
);
CREATE INDEX notes_account_created_idx ON notes (account_id, created_at, id);
CREATE INDEX notes_account_updated_idx ON notes (account_id, updated_at, id);
CREATE INDEX notes_account_title_idx ON notes (account_id, title, id);
CREATE INDEX notes_search_idx ON notes USING gin (search);
CREATE INDEX notes_tags_idx ON notes USING gin (tags);

-- An Idempotency-Key of a POST is remembered per account for 24 hours with
-- the fingerprint of the request and the note it created.
CREATE TABLE idempotency_keys (
    account_id  text        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key         text        NOT NULL,
    fingerprint bytea       NOT NULL,
    note_id     text        NOT NULL,
    response    jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE notes;
DROP TABLE api_keys;
DROP TABLE accounts;
