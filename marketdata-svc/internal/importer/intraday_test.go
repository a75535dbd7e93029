package importer_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

func TestIntradayLayouts(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	cases := []struct {
		name, body string
		zone       *time.Location
		symbol     string
		want       string // first row: symbol UTC-time open
		err        string
	}{
		{"offset in the timestamp", "timestamp,symbol,open,high,low,close,volume\n2024-03-08T09:30:00-05:00,aapl,1,2,0.5,1.5,10\n", nil, "", "AAPL 2024-03-08T14:30:00Z 1", ""},
		{"marketstack's +0000", "date,symbol,open,high,low,close,volume\n2024-03-08T14:30:00+0000,MSFT,1,2,0.5,1.5,10\n", nil, "", "MSFT 2024-03-08T14:30:00Z 1", ""},
		{"zoneless with --tz", "Datetime,Open,High,Low,Close,Volume\n2024-07-08 09:30:00,1,2,0.5,1.5,10\n", ny, "GOOG", "GOOG 2024-07-08T13:30:00Z 1", ""},
		{"date and time columns", "<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>\nAAPL.US,1,20240308,093000,1,2,0.5,1.5,10\n", ny, "", "AAPL 2024-03-08T14:30:00Z 1", ""},
		{"short names", "t,S,o,h,l,c,v\n2024-03-08T14:30:00Z,X,1,2,0.5,1.5,10\n", nil, "X", "X 2024-03-08T14:30:00Z 1", ""},
		{"zoneless without --tz", "timestamp,open,high,low,close,volume\n2024-03-08 09:30:00,1,2,0.5,1.5,10\n", nil, "A", "", "no UTC offset: pass --tz"},
		{"not on a minute", "timestamp,open,high,low,close,volume\n2024-03-08T09:30:15Z,1,2,0.5,1.5,10\n", nil, "A", "", "does not start a minute"},
		{"close above high", "timestamp,open,high,low,close,volume\n2024-03-08T09:30:00Z,1,2,0.5,3,10\n", nil, "A", "", "within low"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := importer.NewIntraday("f.csv", strings.NewReader(c.body), c.symbol, c.zone)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if f.Next() {
				r := f.Row()
				got = fmt.Sprintf("%s %s %g", r.Symbol, r.TS.Format(time.RFC3339), r.Open)
			}
			for f.Next() {
			}
			if c.err != "" {
				if err := f.Err(); err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "f.csv:2:") {
					t.Errorf("err %v, want %q at line 2", err, c.err)
				}
				return
			}
			if got != c.want || f.Err() != nil {
				t.Errorf("got %q (%v), want %q", got, f.Err(), c.want)
			}
		})
	}
}

func TestImportIntraday(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	good := "timestamp,symbol,open,high,low,close,volume\n" +
		"2024-03-08T09:30:00-05:00,AAA,10,11,9,10.5,100\n" +
		"2024-03-08T09:31:00-05:00,AAA,10.5,12,10,11,200\n" +
		"2024-03-08T09:30:00-05:00,BBB,20,21,19,20.5,300\n"
	path := writeFile(t, "good.csv", good)
	res, err := importer.ImportIntradayFile(ctx, s.Ingest, path, importer.IntradayOptions{})
	if err != nil || res.Rows != 3 || res.Load.BarsChanged != 3 || !res.Load.Changed() {
		t.Fatalf("import: %+v %v", res, err)
	}
	t.Run("idempotent", func(t *testing.T) {
		again, err := importer.ImportIntradayFile(ctx, s.Ingest, path, importer.IntradayOptions{})
		if err != nil || again.Load.Changed() || again.Load.BarsChanged != 0 {
			t.Errorf("re-import: %+v %v", again.Load, err)
		}
	})
	t.Run("a bad row rolls the file back", func(t *testing.T) {
		bad := writeFile(t, "bad.csv", "timestamp,symbol,open,high,low,close,volume\n"+
			"2024-03-08T09:32:00-05:00,AAA,11,12,10,11.5,100\n"+
			"2024-03-08T09:33:00-05:00,AAA,11,oops,10,11.5,100\n")
		_, err := importer.ImportIntradayFile(ctx, s.Ingest, bad, importer.IntradayOptions{})
		var rowErrs *importer.RowErrors
		if !errors.As(err, &rowErrs) || !strings.Contains(err.Error(), "bad.csv:3: invalid high") {
			t.Fatalf("err %v", err)
		}
		p, err := s.Reads.Intraday(ctx, marketdata.IntradayQuery{Symbols: []string{"AAA"}, Interval: 1, Limit: 100})
		if err != nil || p.Total != 2 {
			t.Errorf("the good row of the bad file was applied: total %d %v", p.Total, err)
		}
	})
}

// BenchmarkIntradayImportVsCopy imports a file of 1-minute bars (b.N runs
// of benchRows rows, fresh minutes each time) and, for comparison, COPYs
// the same CSV text into an unpartitioned table of the same shape; both
// report rows/s.
func BenchmarkIntradayImportVsCopy(b *testing.B) {
	const benchRows = 200_000
	url := testenv.Postgres(b)
	store := testenv.StoreAt(b, url)
	ctx := context.Background()
	makeCSV := func(run int) string {
		var sb strings.Builder
		sb.WriteString("timestamp,symbol,open,high,low,close,volume\n")
		t0 := time.Date(2024, 1, 2, 14, 30, 0, 0, time.UTC).AddDate(0, 0, run*3)
		for i := range benchRows {
			sym := fmt.Sprintf("S%03d", i%100)
			ts := t0.Add(time.Duration(i/100) * time.Minute)
			fmt.Fprintf(&sb, "%s,%s,%.2f,%.2f,%.2f,%.2f,%d\n", ts.Format(time.RFC3339), sym, 100.0, 101.0, 99.0, 100.5, 1000+i)
		}
		return sb.String()
	}
	run := 0 // every import run gets minutes of its own
	b.Run("import", func(b *testing.B) {
		b.StopTimer()
		for range b.N {
			run++
			path := writeFile(b, "m.csv", makeCSV(run))
			b.StartTimer()
			if _, err := importer.ImportIntradayFile(ctx, store.Ingest, path, importer.IntradayOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
		}
		b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("copy", func(b *testing.B) {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS copy_target (LIKE intraday_bars INCLUDING ALL)`); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for n := range b.N {
			body := makeCSV(n)
			if _, err := conn.Exec(ctx, "TRUNCATE copy_target"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := conn.PgConn().CopyFrom(ctx, strings.NewReader(body),
				"COPY copy_target (ts, symbol, open, high, low, close, volume) FROM STDIN WITH (FORMAT csv, HEADER true)"); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
		}
		b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
