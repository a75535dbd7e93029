-- +goose Up
-- etf_filings and etf_holdings: marketstack v2's ETF holdings (/v2/etflist,
-- /v2/etfholdings), as a fund reports them to the SEC each period (form
-- N-PORT): one filing per ETF ticker and report date, with its holdings in
-- the order reported. Loaded by `import --kind etfs`; an import of a filing
-- replaces its holdings.
CREATE TABLE etf_filings (
    ticker            text NOT NULL,
    report_date       date NOT NULL,
    period_start      date,
    fund_name         text NOT NULL DEFAULT '',
    file_number       text NOT NULL DEFAULT '',
    cik               text NOT NULL DEFAULT '',
    reg_lei           text NOT NULL DEFAULT '',
    series_name       text NOT NULL DEFAULT '',
    series_id         text NOT NULL DEFAULT '',
    series_lei        text NOT NULL DEFAULT '',
    isin              text NOT NULL DEFAULT '',
    final_filing      boolean NOT NULL DEFAULT false,
    date_signed       date,
    name_of_applicant text NOT NULL DEFAULT '',
    signature         text NOT NULL DEFAULT '',
    signer_name       text NOT NULL DEFAULT '',
    signer_title      text NOT NULL DEFAULT '',
    PRIMARY KEY (ticker, report_date)
);

CREATE TABLE etf_holdings (
    ticker              text NOT NULL,
    report_date         date NOT NULL,
    position            integer NOT NULL CHECK (position > 0),
    name                text NOT NULL,
    title               text NOT NULL DEFAULT '',
    lei                 text NOT NULL DEFAULT '',
    isin                text NOT NULL DEFAULT '',
    cusip               text NOT NULL DEFAULT '',
    units               text NOT NULL DEFAULT '',
    balance             double precision,
    currency            text NOT NULL DEFAULT '',
    value_usd           double precision,
    percent_value       double precision,
    asset_category      text NOT NULL DEFAULT '',
    issuer_category     text NOT NULL DEFAULT '',
    payoff_profile      text NOT NULL DEFAULT '',
    fair_value_level    text NOT NULL DEFAULT '',
    invested_country    text NOT NULL DEFAULT '',
    loan_by_fund        text NOT NULL DEFAULT '',
    restricted_sec      text NOT NULL DEFAULT '',
    cash_collateral     text NOT NULL DEFAULT '',
    non_cash_collateral text NOT NULL DEFAULT '',
    PRIMARY KEY (ticker, report_date, position),
    FOREIGN KEY (ticker, report_date) REFERENCES etf_filings ON DELETE CASCADE
);

-- +goose Down
DROP TABLE etf_holdings;
DROP TABLE etf_filings;
