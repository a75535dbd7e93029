package registry_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/feedfake"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed/registry"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// BenchmarkEODHDUniverseDayVsCopy is make bench's sync_universe_day in one
// process: each iteration syncs 2024-03-07 of a 50,000-symbol exchange
// from the EODHD fake (unmeasured), then 2024-03-08 (measured: fetch,
// parse, checks, load, factors, version), then COPYs the 50,000 rows it
// stored, as CSV, into an empty table of eod_bars' shape (measured), back
// to back on the same fresh database. It reports the median of each side
// and of their ratio (COPY's time over sync's: rows/s of sync over rows/s
// of COPY, make bench's figure).
func BenchmarkEODHDUniverseDayVsCopy(b *testing.B) {
	const symbols = 50_000
	fake := feedfake.New(token)
	fake.Synthetic = symbols
	srv := httptest.NewServer(fake.Handler())
	defer srv.Close()
	p := config.SyncProvider{Token: token, URL: srv.URL + "/eodhd", RatePerMinute: 100_000, Burst: 1000}
	cfg := config.Sync{Timeout: 30 * time.Second, Retries: 1, Backoff: time.Second, MaxBackoff: time.Second, Concurrency: 4, EODHD: p}
	prov, err := registry.New("eodhd", cfg, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var syncs, copies, ratios []float64
	for b.Loop() {
		b.StopTimer()
		url := testenv.Postgres(b)
		st := testenv.StoreAt(b, url)
		if _, err := st.Ingest.Apply(ctx, ingest.Load{Exchanges: []marketdata.Exchange{{MIC: "XNAS", Name: "NASDAQ", Timezone: "America/New_York"}}}); err != nil {
			b.Fatal(err)
		}
		sync := func(from, to string) time.Duration {
			o := feed.Options{Exchange: "XNAS", To: day(to), Concurrency: 4}
			if from != "" {
				o.From = day(from)
			}
			t0 := time.Now()
			rep, err := feed.Run(ctx, prov, st.Ingest, o)
			el := time.Since(t0)
			if err != nil || rep.ExitCode() != feed.ExitOK {
				b.Fatalf("sync to %s: exit %d, %v %v", to, rep.ExitCode(), err, rep.Failed)
			}
			return el
		}
		sync("2024-03-07", "2024-03-07")
		b.StartTimer()
		syncTime := sync("", "2024-03-08")
		b.StopTimer()
		copyTime := copyDay(b, url, "2024-03-08", symbols)
		syncs, copies = append(syncs, syncTime.Seconds()), append(copies, copyTime.Seconds())
		ratios = append(ratios, copyTime.Seconds()/syncTime.Seconds())
		b.StartTimer()
	}
	b.ReportMetric(median(syncs), "sync-s")
	b.ReportMetric(median(copies), "copy-s")
	b.ReportMetric(median(ratios), "ratio")
}

// copyDay exports day's stored bars as CSV and times COPY of them into an
// empty table of eod_bars' shape, as make bench's ceiling does with psql.
func copyDay(b *testing.B, url, date string, want int) time.Duration {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var csv bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &csv, "COPY (SELECT symbol, date, open, high, low, close, volume FROM eod_bars WHERE date = '"+date+"') TO STDOUT WITH (FORMAT csv)"); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE copy_target (LIKE eod_bars INCLUDING ALL)"); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	tag, err := conn.PgConn().CopyFrom(ctx, &csv, "COPY copy_target (symbol, date, open, high, low, close, volume) FROM STDIN WITH (FORMAT csv)")
	el := time.Since(t0)
	if err != nil {
		b.Fatal(err)
	}
	if tag.RowsAffected() != int64(want) {
		b.Fatalf("COPY loaded %d rows, the sync stored %d", tag.RowsAffected(), want)
	}
	return el
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
