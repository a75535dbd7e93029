package marketdata_test

import (
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

func BenchmarkCanonicalKey(b *testing.B) {
	q := marketdata.EODQuery{Symbols: []string{"SYN000001", "SYN000002"}, Sort: marketdata.SortDesc, Limit: 100}
	b.ReportAllocs()
	for b.Loop() {
		_ = q.CanonicalKey()
	}
}
