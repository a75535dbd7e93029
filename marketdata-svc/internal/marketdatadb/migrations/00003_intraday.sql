-- +goose Up
-- Intraday prices: raw 1-minute bars, as imported or generated.
-- Every interval the API serves is aggregated from these at query time.
--
-- Range-partitioned by month on ts: a query for some days reads only the
-- partitions of those months (pruning), old months can be detached or
-- dropped whole, and each partition's primary key stays small enough to
-- stay cached (docs/DATA.md has the measurement). Partitions are created
-- by the loads that need them (marketdatadb.ensureIntradayPartitions) in a
-- short transaction of their own; there is no default partition, so a row
-- of a month without a partition fails the load instead of landing in a
-- catch-all that would have to be split later.
CREATE TABLE intraday_bars (
    symbol text NOT NULL,
    -- start of the minute, UTC
    ts     timestamptz NOT NULL,
    open   double precision NOT NULL,
    high   double precision NOT NULL,
    low    double precision NOT NULL,
    close  double precision NOT NULL,
    volume double precision NOT NULL,
    -- A symbol's minutes in time order, in either direction; the partition
    -- key is part of it, as PostgreSQL requires of a partitioned key.
    PRIMARY KEY (symbol, ts)
) PARTITION BY RANGE (ts);

-- +goose Down
DROP TABLE intraday_bars;
