-- +goose Up
-- What `marketdata-svc sync` has fetched from each data provider and
-- stored, so that a run killed at any point resumes where it stopped
-- instead of starting over, and so that the serving instances can export
-- when each provider last synced successfully.
--
-- sync_progress: per provider and symbol, the contiguous window of days
-- [from_date, through] whose bars were fetched and committed (through is
-- the last bar received, never a day the provider had nothing for yet, so a
-- bar published late is asked for again). An exchange's bulk day is kept
-- under the symbol '@' || its code.
CREATE TABLE sync_progress (
    provider   text NOT NULL,
    symbol     text NOT NULL,
    from_date  date NOT NULL,
    through    date NOT NULL CHECK (through >= from_date),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, symbol)
);

-- sync_runs: per provider, the last run and the last one that succeeded
-- (every symbol synced), which marketdata_sync_last_success_timestamp_seconds
-- exports and the SyncStale alert watches.
CREATE TABLE sync_runs (
    provider        text PRIMARY KEY,
    last_started_at timestamptz NOT NULL,
    last_ended_at   timestamptz,
    last_status     text NOT NULL DEFAULT 'running',
    last_rows       bigint NOT NULL DEFAULT 0,
    last_failed     integer NOT NULL DEFAULT 0,
    last_success_at timestamptz
);

-- +goose Down
DROP TABLE sync_runs;
DROP TABLE sync_progress;
