package httpapi

import (
	"context"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/eodjson"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// EODPages answers EOD queries with pages already encoded: the cache does,
// keeping them in that form, so a hit costs the handler a few appends
// around cached bytes.
type EODPages interface {
	EncodedEOD(ctx context.Context, q marketdata.EODQuery) (eodjson.Page, error)
}

// encodingStore answers EOD queries from a store without a cache,
// encoding each page it reads.
type encodingStore struct{ marketdata.Store }

// EncodedEOD reads q's page and encodes it.
func (s encodingStore) EncodedEOD(ctx context.Context, q marketdata.EODQuery) (eodjson.Page, error) {
	page, err := s.EOD(ctx, q)
	if err != nil {
		return eodjson.Page{}, err
	}
	return eodjson.Encode(page), nil
}
