-- +goose Up
-- commodity_prices: marketstack v2's commodities (/v2/commodities and
-- /v2/commoditieshistory), one price per commodity and day, loaded by
-- `import --kind commodities`. The name is kept lower case, as clients
-- send it; the unit is the commodity's and repeats on each row so that a
-- file of one commodity is self-contained.
CREATE TABLE commodity_prices (
    name  text NOT NULL CHECK (name <> '' AND name = lower(name)),
    unit  text NOT NULL DEFAULT '',
    date  date NOT NULL,
    price double precision NOT NULL CHECK (price >= 0),
    PRIMARY KEY (name, date)
);

-- +goose Down
DROP TABLE commodity_prices;
