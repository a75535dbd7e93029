-- +goose Up
-- The audit trail of the key store (pkg/keystore): one row per change to
-- an account or a key, written in the change's own transaction, naming who
-- made it (an admin token's name, or "cli") and never a secret. Ids are
-- text in both services, as the store passes every id. Rows older than the
-- retention setting are deleted by the serving process.
CREATE TABLE key_audit (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL,
    actor      text NOT NULL CHECK (length(actor) BETWEEN 1 AND 64),
    action     text NOT NULL,
    account_id text NOT NULL,
    key_id     text NOT NULL DEFAULT '',
    key_hint   text NOT NULL DEFAULT '',
    detail     text NOT NULL DEFAULT ''
);
CREATE INDEX key_audit_at_idx ON key_audit (at);

-- +goose Down
DROP TABLE key_audit;
