-- +goose Up
-- Prices are double precision: a CSV decimal such as 362.71 round-trips
-- exactly through float8 (shortest representation), and float8 copies and
-- scans far faster than numeric at tens of millions of rows.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE exchanges (
    mic          text PRIMARY KEY,
    name         text NOT NULL,
    acronym      text NOT NULL DEFAULT '',
    country_code text NOT NULL DEFAULT '',
    country      text NOT NULL DEFAULT '',
    city         text NOT NULL DEFAULT '',
    website      text NOT NULL DEFAULT '',
    timezone     text NOT NULL DEFAULT '',
    currency     text NOT NULL DEFAULT ''
);

CREATE TABLE tickers (
    symbol         text PRIMARY KEY,
    name           text NOT NULL DEFAULT '',
    asset_type     text NOT NULL DEFAULT 'Stock',
    price_currency text NOT NULL DEFAULT 'USD',
    -- NULL when the listing exchange is unknown (stock_exchange: null).
    exchange_mic   text REFERENCES exchanges (mic),
    has_intraday   boolean NOT NULL DEFAULT false,
    has_eod        boolean NOT NULL DEFAULT false
);
-- /v1/exchanges/{mic}/tickers and ?exchange= walk this in symbol order.
CREATE INDEX tickers_exchange_symbol_idx ON tickers (exchange_mic, symbol);
-- /v1/tickers?search= is a substring match on symbol or name.
CREATE INDEX tickers_symbol_trgm_idx ON tickers USING gin (symbol gin_trgm_ops);
CREATE INDEX tickers_name_trgm_idx ON tickers USING gin (name gin_trgm_ops);

-- eod_bars holds raw prices as imported plus the backward adjustment
-- factors (CRSP method, see docs/DATA.md). adj_x = x * price_factor and
-- adj_volume = volume * volume_factor. No foreign key to tickers: the
-- importer creates the ticker row, and a per-row FK check would halve bulk
-- load speed.
CREATE TABLE eod_bars (
    symbol        text NOT NULL,
    date          date NOT NULL,
    open          double precision NOT NULL,
    high          double precision NOT NULL,
    low           double precision NOT NULL,
    close         double precision NOT NULL,
    volume        double precision NOT NULL,
    split_factor  double precision NOT NULL DEFAULT 1,
    dividend      double precision NOT NULL DEFAULT 0,
    price_factor  double precision NOT NULL DEFAULT 1,
    volume_factor double precision NOT NULL DEFAULT 1,
    -- The primary key serves every EOD read: a symbol's date range in
    -- either direction (also backwards for "latest"), and index-only counts.
    PRIMARY KEY (symbol, date)
);

CREATE TABLE splits (
    symbol text NOT NULL,
    date   date NOT NULL,
    -- new shares per old share: 4 for 4:1, 0.1 for a 1:10 reverse split
    factor double precision NOT NULL CHECK (factor > 0),
    PRIMARY KEY (symbol, date)
);
CREATE INDEX splits_date_idx ON splits (date);

CREATE TABLE dividends (
    symbol text NOT NULL,
    date   date NOT NULL,
    amount double precision NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (symbol, date)
);
CREATE INDEX dividends_date_idx ON dividends (date);

CREATE TABLE accounts (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id      uuid NOT NULL REFERENCES accounts (id),
    -- SHA-256 of the whole key; the plaintext is never stored.
    hash            bytea NOT NULL UNIQUE CHECK (length(hash) = 32),
    hint            text NOT NULL,
    scopes          text[] NOT NULL,
    rate_per_second integer NOT NULL DEFAULT 0 CHECK (rate_per_second >= 0),
    monthly_quota   bigint NOT NULL DEFAULT 0 CHECK (monthly_quota >= 0),
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz,
    revoked_at      timestamptz,
    last_used_at    timestamptz
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id);

-- data_version is one row, bumped by every import that changes data; caches
-- key their entries with it.
CREATE TABLE data_version (
    id      boolean PRIMARY KEY DEFAULT true CHECK (id),
    version bigint NOT NULL
);
INSERT INTO data_version (id, version) VALUES (true, 1);

-- +goose Down
DROP TABLE data_version;
DROP TABLE api_keys;
DROP TABLE accounts;
DROP TABLE dividends;
DROP TABLE splits;
DROP TABLE eod_bars;
DROP TABLE tickers;
DROP TABLE exchanges;
