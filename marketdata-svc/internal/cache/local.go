package cache

import (
	"log/slog"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// LocalMaxBytes bounds the in-process cache's memory whatever its entry
// count, so a few huge pages cannot blow the service's memory budget.
const LocalMaxBytes = 64 << 20

// NewLocal returns the in-process cache around inner, holding at most
// maxItems entries and LocalMaxBytes bytes, at the versions that versions
// tells. It logs that it is in use, since a fleet of instances each with
// its own cache shares no hits.
func NewLocal(inner marketdata.Store, versions Versions, maxItems int, o Options) *Store {
	if o.TTL <= 0 {
		o.TTL = 5 * time.Minute
	}
	if o.Logger != nil {
		o.Logger.Info("no redis configured: using a bounded in-process EOD cache",
			slog.Int("max_entries", max(maxItems, 1)), slog.Int("max_bytes", LocalMaxBytes))
	}
	return newStore(inner, versions, newL1(maxItems, LocalMaxBytes, o.TTL), "local", o)
}
