package reads

import (
	"context"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/pkg/postgres"
)

// Reader is what Retry wraps: the reads of one database (Store) or of the
// replica router.
type Reader interface {
	marketdata.Store
	marketdata.IntradayStore
}

// Retry is a Reader whose reads, when one fails as a failover fails it (a
// connection to a dead or demoted primary, pkg/postgres.Retryable), run
// once more after a short pause, inside the request's own deadline: a
// read cannot apply twice, and the pause lets the pool drop the dead
// connection and HAProxy point at the new primary. It sits above the
// replica router, whose replica reads already fall back to the primary.
type Retry struct {
	next Reader
}

// NewRetry returns next with its reads retried once.
func NewRetry(next Reader) Retry { return Retry{next: next} }

var _ Reader = Retry{}

// retried is read of q under postgres.RetryOnce.
func retried[Q, T any](ctx context.Context, q Q, read func(context.Context, Q) (T, error)) (T, error) {
	return postgres.RetryOnce(ctx, func(ctx context.Context) (T, error) { return read(ctx, q) })
}

// EOD implements marketdata.Store.
func (r Retry) EOD(ctx context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	return retried(ctx, q, r.next.EOD)
}

// Intraday implements marketdata.IntradayStore.
func (r Retry) Intraday(ctx context.Context, q marketdata.IntradayQuery) (marketdata.IntradayPage, error) {
	return retried(ctx, q, r.next.Intraday)
}

// Ticker implements marketdata.Store.
func (r Retry) Ticker(ctx context.Context, symbol string) (marketdata.Ticker, error) {
	return retried(ctx, symbol, r.next.Ticker)
}

// Tickers implements marketdata.Store.
func (r Retry) Tickers(ctx context.Context, q marketdata.TickerQuery) (marketdata.TickerPage, error) {
	return retried(ctx, q, r.next.Tickers)
}

// Exchange implements marketdata.Store.
func (r Retry) Exchange(ctx context.Context, mic string) (marketdata.Exchange, error) {
	return retried(ctx, mic, r.next.Exchange)
}

// Exchanges implements marketdata.Store.
func (r Retry) Exchanges(ctx context.Context, q marketdata.ExchangeQuery) (marketdata.ExchangePage, error) {
	return retried(ctx, q, r.next.Exchanges)
}

// Splits implements marketdata.Store.
func (r Retry) Splits(ctx context.Context, q marketdata.ActionQuery) (marketdata.SplitPage, error) {
	return retried(ctx, q, r.next.Splits)
}

// Dividends implements marketdata.Store.
func (r Retry) Dividends(ctx context.Context, q marketdata.ActionQuery) (marketdata.DividendPage, error) {
	return retried(ctx, q, r.next.Dividends)
}

// Indices implements marketdata.Store.
func (r Retry) Indices(ctx context.Context, q marketdata.IndexQuery) (marketdata.IndexPage, error) {
	return retried(ctx, q, r.next.Indices)
}

// LoadedDatasets implements marketdata.Store.
func (r Retry) LoadedDatasets(ctx context.Context) (marketdata.LoadedDatasets, error) {
	return retried(ctx, struct{}{}, func(ctx context.Context, _ struct{}) (marketdata.LoadedDatasets, error) {
		return r.next.LoadedDatasets(ctx)
	})
}

// Commodity implements marketdata.Store.
func (r Retry) Commodity(ctx context.Context, name string) (marketdata.CommoditySeries, error) {
	return retried(ctx, name, r.next.Commodity)
}

// CompanyRatings implements marketdata.Store.
func (r Retry) CompanyRatings(ctx context.Context, symbol string) ([]marketdata.Rating, error) {
	return retried(ctx, symbol, r.next.CompanyRatings)
}

// BondCountries implements marketdata.Store.
func (r Retry) BondCountries(ctx context.Context, p marketdata.ListPage) (marketdata.NamePage, error) {
	return retried(ctx, p, r.next.BondCountries)
}

// BondYields implements marketdata.Store.
func (r Retry) BondYields(ctx context.Context, country string) ([]marketdata.BondYield, error) {
	return retried(ctx, country, r.next.BondYields)
}

// ETFs implements marketdata.Store.
func (r Retry) ETFs(ctx context.Context, p marketdata.ListPage) (marketdata.NamePage, error) {
	return retried(ctx, p, r.next.ETFs)
}

// ETFHoldings implements marketdata.Store.
func (r Retry) ETFHoldings(ctx context.Context, q marketdata.ETFQuery) (marketdata.ETFFilingHoldings, error) {
	return retried(ctx, q, r.next.ETFHoldings)
}

// EDGARCompanies implements marketdata.Store.
func (r Retry) EDGARCompanies(ctx context.Context, q marketdata.EDGARQuery) (marketdata.EDGARPage, error) {
	return retried(ctx, q, r.next.EDGARCompanies)
}

// EDGARCompany implements marketdata.Store.
func (r Retry) EDGARCompany(ctx context.Context, cik string) (marketdata.EDGARCompany, error) {
	return retried(ctx, cik, r.next.EDGARCompany)
}

// Frame implements marketdata.Store.
func (r Retry) Frame(ctx context.Context, q marketdata.FrameQuery) ([]marketdata.FramePoint, error) {
	return retried(ctx, q, r.next.Frame)
}
