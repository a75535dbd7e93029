-- +goose Up
-- company_ratings: marketstack v2's analyst ratings (/v2/companyratings),
-- one rating per analyst of a firm, company and day, loaded by
-- `import --kind ratings`. The consensus is computed from the rows when
-- asked, so it never disagrees with them.
CREATE TABLE company_ratings (
    symbol       text NOT NULL,
    analyst_firm text NOT NULL,
    analyst_name text NOT NULL,
    date         date NOT NULL,
    company_name text NOT NULL DEFAULT '',
    analyst_role text NOT NULL DEFAULT '',
    target_date  date,
    price_target double precision CHECK (price_target >= 0),
    rated        text NOT NULL CHECK (rated IN ('buy', 'hold', 'sell')),
    conclusion   text NOT NULL DEFAULT '',
    PRIMARY KEY (symbol, analyst_firm, analyst_name, date)
);

-- +goose Down
DROP TABLE company_ratings;
