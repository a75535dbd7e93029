-- +goose Up
-- A trashed note is left out of lists until it is restored or purged.
ALTER TABLE notes ADD COLUMN trashed_at timestamptz;

-- The event log: one row per change to a note, written in the change's
-- transaction. (xid, seq) orders the events of an account totally.
CREATE TABLE events (
    seq        bigserial   PRIMARY KEY,
    id         text        NOT NULL UNIQUE,
    account_id text        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type       text        NOT NULL,
    created_at timestamptz NOT NULL,
    data       jsonb       NOT NULL,
    -- seq is taken before commit, so a transaction that commits late can
    -- publish a lower seq after a reader has passed it: readers go in
    -- (xid, seq) order and only below the oldest transaction still running.
    xid        xid8        NOT NULL DEFAULT pg_current_xact_id()
);
-- The feed of one account, and the webhook relay over every account.
CREATE INDEX events_account_xid_idx ON events (account_id, xid, seq);
CREATE INDEX events_xid_idx ON events (xid, seq);
-- Pruning deletes the oldest events of every account, in batches.
CREATE INDEX events_created_idx ON events (created_at);

-- Purging finds the notes trashed before the trash retention across
-- accounts; a listing of trashed=true the account's trashed notes in the
-- created_at order. Few notes are in the trash, so both indexes are
-- partial and small; the other listings keep the indexes of 00001 and
-- drop the trashed rows they meet.
CREATE INDEX notes_trashed_idx ON notes (trashed_at) WHERE trashed_at IS NOT NULL;
CREATE INDEX notes_account_trashed_created_idx ON notes (account_id, created_at, id) WHERE trashed_at IS NOT NULL;

-- +goose Down
DROP INDEX notes_account_trashed_created_idx;
DROP INDEX notes_trashed_idx;
DROP TABLE events;
ALTER TABLE notes DROP COLUMN trashed_at;
