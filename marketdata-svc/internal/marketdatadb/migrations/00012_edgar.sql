-- +goose Up
-- edgar_companies: SEC EDGAR's documents of each company, as SEC's APIs
-- serve them (data.sec.gov/submissions/CIK##########.json and
-- api/xbrl/companyfacts/CIK##########.json), loaded by `import --kind
-- edgar` or the edgar provider of sync. marketstack's v2 EDGAR functions
-- answer from them; they are kept whole because those functions answer
-- most of each document.
CREATE TABLE edgar_companies (
    cik         text PRIMARY KEY CHECK (cik ~ '^[0-9]{10}$'),
    name        text NOT NULL,
    submissions jsonb,
    facts       jsonb
);

-- +goose Down
DROP TABLE edgar_companies;
