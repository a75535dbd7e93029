-- +goose Up
-- The durable copy of each key's monthly usage counter, which Redis keeps
-- (ratelimit.UsageSync copies it here every few seconds and raises a
-- counter Redis lost back to it): Redis may run without persistence, and
-- its restart must not give every key its month's quota again.
--
-- key_id is the limiter's key id, kept as text and without a foreign key:
-- the copy must never fail because a key was deleted meanwhile, and a
-- deleted key's rows are harmless. month is the month's first day (UTC).
CREATE TABLE key_usage (
    key_id text NOT NULL,
    month  date NOT NULL,
    used   bigint NOT NULL CHECK (used >= 0),
    PRIMARY KEY (key_id, month)
);

-- +goose Down
DROP TABLE key_usage;
