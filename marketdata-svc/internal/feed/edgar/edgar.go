// Package edgar reads SEC EDGAR's company documents for `marketdata-svc
// sync --provider edgar`: a company's submissions
// (data.sec.gov/submissions/CIK##########.json) and its XBRL company facts
// (data.sec.gov/api/xbrl/companyfacts/CIK##########.json), as SEC documents
// them ("Accessing EDGAR Data" and the EDGAR APIs page). SEC asks every
// client to send a User-Agent naming it and a contact, and to stay under
// 10 requests a second; both are the Source's options.
package edgar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// BaseURL is SEC's API root for both documents.
const BaseURL = "https://data.sec.gov"

// ErrNoUserAgent reports a sync without the User-Agent SEC requires.
var ErrNoUserAgent = errors.New("edgar: set MARKETDATA_SYNC_EDGAR_USER_AGENT to who you are and a contact, e.g. \"Example Corp admin@example.com\": SEC refuses requests without one")

// Source fetches companies' documents from EDGAR.
type Source struct {
	client *feed.Client
}

// New returns the source cfg describes.
func New(cfg config.Sync, log *slog.Logger) (*Source, error) {
	ua := strings.TrimSpace(cfg.EDGARUserAgent)
	if ua == "" || !strings.Contains(ua, "@") {
		return nil, ErrNoUserAgent
	}
	base := cfg.EDGAR.URL
	if base == "" {
		base = BaseURL
	}
	c, err := feed.NewClient(feed.ClientOptions{Provider: "edgar", BaseURL: base, Timeout: cfg.Timeout, Retries: cfg.Retries,
		Backoff: cfg.Backoff, MaxBackoff: cfg.MaxBackoff, RatePerMinute: cfg.EDGAR.RatePerMinute, Burst: cfg.EDGAR.Burst,
		Log: log, UserAgent: ua})
	if err != nil {
		return nil, err
	}
	return &Source{client: c}, nil
}

// Company fetches one company's submissions and, when SEC has them, its
// company facts (a filer without XBRL financial data has none: 404), each
// checked as `import --kind edgar` checks a file.
func (s *Source) Company(ctx context.Context, cik string) ([]marketdata.EDGARCompany, error) {
	cik, err := importer.ParseCIK(cik)
	if err != nil {
		return nil, fmt.Errorf("edgar: %w", err)
	}
	var out []marketdata.EDGARCompany
	for _, doc := range []struct {
		path     string
		optional bool
	}{{"/submissions/CIK" + cik + ".json", false}, {"/api/xbrl/companyfacts/CIK" + cik + ".json", true}} {
		c, err := s.document(ctx, doc.path)
		if doc.optional && errors.Is(err, feed.ErrUnknownSymbol) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if c.CIK != cik {
			return nil, fmt.Errorf("edgar: %s holds CIK %s", doc.path, c.CIK)
		}
		out = append(out, c)
	}
	return out, nil
}

func (s *Source) document(ctx context.Context, path string) (marketdata.EDGARCompany, error) {
	body, err := s.client.Get(ctx, path, nil, nil)
	if err != nil {
		return marketdata.EDGARCompany{}, err
	}
	defer body.Close()
	return importer.ReadEDGAR("edgar "+path, io.Reader(body))
}
