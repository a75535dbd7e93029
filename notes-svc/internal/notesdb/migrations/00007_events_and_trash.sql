-- +goose Up
-- A trashed note is left out of lists until it is restored or purged.
ALTER TABLE notes ADD COLUMN trashed_at timestamptz;

-- The event log: one row per change to a note, written in the change's
-- transaction. seq orders the events of an account totally.
CREATE TABLE events (
    seq        bigserial   PRIMARY KEY,
    id         text        NOT NULL UNIQUE,
    account_id text        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type       text        NOT NULL,
    created_at timestamptz NOT NULL,
    data       jsonb       NOT NULL,
    -- seq is taken before commit, so a transaction that commits late can
    -- publish a lower seq after a reader has passed it: the feed shows only
    -- rows written below the oldest transaction still running.
    xid        xid8        NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX events_account_seq_idx ON events (account_id, seq);

-- +goose Down
DROP TABLE events;
ALTER TABLE notes DROP COLUMN trashed_at;
