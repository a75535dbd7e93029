-- +goose Up
-- One key store (pkg/keystore) serves both services, so accounts and
-- api_keys have the same columns and rules here as in notes-svc: a key
-- has a name for people, and an account name is 1 to 100 bytes (the keys
-- command has checked it since before this rule; NOT VALID leaves any
-- older row as it is).
ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT '' CHECK (length(name) <= 100);
ALTER TABLE accounts ADD CONSTRAINT accounts_name_check CHECK (length(name) BETWEEN 1 AND 100) NOT VALID;

-- +goose Down
ALTER TABLE accounts DROP CONSTRAINT accounts_name_check;
ALTER TABLE api_keys DROP COLUMN name;
