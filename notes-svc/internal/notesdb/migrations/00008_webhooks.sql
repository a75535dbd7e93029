-- +goose Up
-- Webhook endpoints: where an account's events are POSTed. The secrets are
-- sealed with AES-256-GCM under the service's key (the HMAC needs them
-- back, so they cannot be hashed); previous_secret stays valid until
-- previous_expires_at after a rotation.
CREATE TABLE webhook_endpoints (
    id                  text        PRIMARY KEY,
    account_id          text        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url                 text        NOT NULL,
    -- The event types sent; an empty array means every type.
    types               jsonb       NOT NULL DEFAULT '[]',
    enabled             boolean     NOT NULL DEFAULT true,
    disabled_reason     text        NOT NULL DEFAULT '',
    secret              bytea       NOT NULL,
    previous_secret     bytea,
    previous_expires_at timestamptz,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, created_at, id);
-- The relay joins each event with its account's enabled endpoints here.
CREATE INDEX webhook_endpoints_enabled_idx ON webhook_endpoints (account_id) WHERE enabled;

-- One row per event and endpoint: the delivery log, written by the relay
-- from the event log; River's job carries out the attempts.
CREATE TABLE webhook_deliveries (
    id              text        PRIMARY KEY,
    account_id      text        NOT NULL,
    endpoint_id     text        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_seq       bigint      NOT NULL,
    event_id        text        NOT NULL,
    event_type      text        NOT NULL,
    status          text        NOT NULL DEFAULT 'pending',
    attempts        integer     NOT NULL DEFAULT 0,
    last_status     integer,
    last_latency_ms integer,
    last_error      text        NOT NULL DEFAULT '',
    next_attempt_at timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (account_id, endpoint_id, created_at DESC, id DESC);

-- The outbox relay's position in the event log, in the log's (xid, seq)
-- order: the relay writes the deliveries of the events past it and moves
-- it, in one transaction, holding the row's lock, so replicas take turns.
CREATE TABLE webhook_relay (
    id        smallint PRIMARY KEY CHECK (id = 1),
    after_xid xid8     NOT NULL,
    after_seq bigint   NOT NULL
);
INSERT INTO webhook_relay VALUES (1, '0', 0);

-- +goose Down
DROP TABLE webhook_relay;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
