-- +goose Up
-- marketstack compatibility.

-- A ticker's country as marketstack reports it; NULL when unknown, which
-- is served as "country": null.
ALTER TABLE tickers ADD COLUMN country text;

-- ratio is the backward price ratio of a dividend as its source published
-- it, used instead of 1 - amount/previous close when the store does not hold
-- the trading day before the ex-date (a series that ends before it).
ALTER TABLE dividends ADD COLUMN ratio double precision CHECK (ratio > 0 AND ratio <= 1);

-- marketstack names Xetra "XETRA", not the ISO MIC "XETR"; the ISO code
-- stays accepted as an alias in the API. The foreign key from tickers has
-- no ON UPDATE CASCADE, so the row is copied, tickers moved, the old row
-- dropped.
INSERT INTO exchanges (mic, name, acronym, country_code, country, city, website, timezone, currency)
SELECT 'XETRA', name, acronym, country_code, country, city, website, timezone, currency
FROM exchanges WHERE mic = 'XETR'
ON CONFLICT (mic) DO NOTHING;
UPDATE tickers SET exchange_mic = 'XETRA' WHERE exchange_mic = 'XETR';
DELETE FROM exchanges WHERE mic = 'XETR';

-- Answers change shape: no cached page of the old version may be served.
UPDATE data_version SET version = version + 1;

-- +goose Down
INSERT INTO exchanges (mic, name, acronym, country_code, country, city, website, timezone, currency)
SELECT 'XETR', name, acronym, country_code, country, city, website, timezone, currency
FROM exchanges WHERE mic = 'XETRA'
ON CONFLICT (mic) DO NOTHING;
UPDATE tickers SET exchange_mic = 'XETR' WHERE exchange_mic = 'XETRA';
DELETE FROM exchanges WHERE mic = 'XETRA';
ALTER TABLE dividends DROP COLUMN ratio;
ALTER TABLE tickers DROP COLUMN country;
