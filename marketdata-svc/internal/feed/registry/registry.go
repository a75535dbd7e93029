// Package registry builds a sync provider by name from the service's
// configuration: its adapter, over a feed.Client with the provider's
// credential, base URL (MARKETDATA_SYNC_<NAME>_URL, else its own) and
// rate, and the shared timeout and retry settings.
package registry

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/eodhd"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/marketstack"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/stooq"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/tiingo"
)

// Names lists the providers, as --provider takes them.
var Names = []string{marketstack.Name, tiingo.Name, eodhd.Name, stooq.Name}

// New returns the provider name configured by cfg. A keyed provider
// without its token is an error: every request would be refused.
// transport may be nil (http.DefaultTransport).
func New(name string, cfg config.Sync, log *slog.Logger, transport http.RoundTripper) (feed.Provider, error) {
	pc, ok := cfg.Provider(name)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q (one of %s)", name, strings.Join(Names, ", "))
	}
	o := feed.ClientOptions{
		Provider: name, Token: pc.Token, Timeout: cfg.Timeout, Retries: cfg.Retries, Backoff: cfg.Backoff,
		MaxBackoff: cfg.MaxBackoff, RatePerMinute: pc.RatePerMinute, Burst: pc.Burst, Log: log, Transport: transport,
	}
	var build func(*feed.Client) feed.Provider
	switch name {
	case marketstack.Name:
		o.BaseURL, o.TokenParam = marketstack.DefaultURL, marketstack.TokenParam
		build = func(c *feed.Client) feed.Provider { return marketstack.New(c) }
	case tiingo.Name:
		o.BaseURL, o.TokenParam = tiingo.DefaultURL, tiingo.TokenParam
		build = func(c *feed.Client) feed.Provider { return tiingo.New(c) }
	case eodhd.Name:
		o.BaseURL, o.TokenParam = eodhd.DefaultURL, eodhd.TokenParam
		build = func(c *feed.Client) feed.Provider { return eodhd.New(c) }
	default:
		o.BaseURL, o.TokenParam = stooq.DefaultURL, stooq.TokenParam
		build = func(c *feed.Client) feed.Provider { return stooq.New(c) }
	}
	if pc.URL != "" {
		o.BaseURL = pc.URL
	}
	if name != stooq.Name && pc.Token == "" {
		return nil, fmt.Errorf("provider %s: MARKETDATA_SYNC_%s_TOKEN is not set", name, strings.ToUpper(name))
	}
	c, err := feed.NewClient(o)
	if err != nil {
		return nil, err
	}
	return build(c), nil
}
