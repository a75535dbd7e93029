-- +goose Up
-- bond_yields: marketstack v2's government bonds (/v2/bondlist,
-- /v2/bond), one yield per country, tenor (type, like 10Y) and day, loaded
-- by `import --kind bonds`. The country is kept lower case, as clients
-- send it; the changes /v2/bond answers are computed from the rows.
CREATE TABLE bond_yields (
    country text NOT NULL CHECK (country <> '' AND country = lower(country)),
    type    text NOT NULL CHECK (type <> ''),
    date    date NOT NULL,
    region  text NOT NULL DEFAULT '',
    yield   double precision NOT NULL,
    PRIMARY KEY (country, type, date)
);

-- +goose Down
DROP TABLE bond_yields;
