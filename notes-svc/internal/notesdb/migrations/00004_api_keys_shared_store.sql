-- +goose Up
-- One key store (pkg/keystore) serves both services, so api_keys has the
-- same columns here as in marketdata-svc: a name for people, and the
-- per-key limits. notes-svc sets no per-key limit (NOTES_RATE_LIMIT_PER_SECOND
-- applies to every key), so they stay 0, which means none.
ALTER TABLE api_keys
    ADD COLUMN name            text    NOT NULL DEFAULT '' CHECK (length(name) <= 100),
    ADD COLUMN rate_per_second integer NOT NULL DEFAULT 0 CHECK (rate_per_second >= 0),
    ADD COLUMN monthly_quota   bigint  NOT NULL DEFAULT 0 CHECK (monthly_quota >= 0);

-- +goose Down
ALTER TABLE api_keys DROP COLUMN monthly_quota, DROP COLUMN rate_per_second, DROP COLUMN name;
