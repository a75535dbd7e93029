-- +goose Up
-- eod_changes: what each data version changed in the EOD bars served,
-- written by the load that bumped the version, in its transaction. The
-- symbols of a row changed from from_date on: a new or restated bar on that
-- date, or later ones; '-infinity' is every date of the symbol, as a split
-- or dividend changes the adjusted values of all earlier bars. A symbol may
-- be in several rows of a version (a bar of the day and a split): its
-- earliest date counts. The caches read the table to keep, across an
-- import, the pages that no change reaches.
--
-- A version without rows here may have changed anything (tickers,
-- exchanges, intraday bars, reference data): no page is kept across it.
-- Symbols are grouped, so that a day of a whole universe (one date for
-- nearly every symbol) is a row or two, not a row per symbol. Loads prune
-- the rows of older versions: only the last ones are of use.
CREATE TABLE eod_changes (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    version   bigint NOT NULL,
    from_date date NOT NULL,
    symbols   text[] NOT NULL
);
CREATE INDEX eod_changes_version_idx ON eod_changes (version);

-- +goose Down
DROP TABLE eod_changes;
