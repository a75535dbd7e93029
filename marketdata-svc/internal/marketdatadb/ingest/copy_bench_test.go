package ingest_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// BenchmarkCopyBars streams a day of 50,000 symbols into an empty table
// of eod_bars' shape (rolled back each time) through the load's own
// binary COPY stream and through pgx's CopyFrom, with the CPU time the
// client spent; the package comment gives the figures.
func BenchmarkCopyBars(b *testing.B) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Postgres(b))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE copy_target (LIKE eod_bars INCLUDING ALL)"); err != nil {
		b.Fatal(err)
	}
	day := time.Date(2024, 3, 8, 0, 0, 0, 0, time.UTC)
	rows := make([]ingest.BarRow, 50_000)
	for i := range rows {
		p := 10 + float64(i%1000)/10
		rows[i] = ingest.BarRow{Symbol: fmt.Sprintf("S%05d", i), Date: day, Open: p, High: p + 1, Low: p - 1, Close: p + 0.5, Volume: float64(1000 + i)}
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	run := func(b *testing.B, copyRows func(tx pgx.Tx) (int64, error)) {
		cpu0 := cpu()
		for b.Loop() {
			tx, err := conn.Begin(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if n, err := copyRows(tx); err != nil || n != int64(len(rows)) {
				b.Fatal(n, err)
			}
			if err := tx.Rollback(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64((cpu()-cpu0).Milliseconds())/float64(b.N), "client-cpu-ms/op")
	}
	b.Run("binary-stream", func(b *testing.B) {
		run(b, func(tx pgx.Tx) (int64, error) { return ingest.CopyRowsForTest(ctx, tx, "copy_target", rows) })
	})
	b.Run("pgx-CopyFrom", func(b *testing.B) {
		run(b, func(tx pgx.Tx) (int64, error) {
			return tx.CopyFrom(ctx, pgx.Identifier{"copy_target"}, []string{"symbol", "date", "open", "high", "low", "close", "volume"},
				pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
					r := &rows[i]
					return []any{r.Symbol, r.Date, r.Open, r.High, r.Low, r.Close, r.Volume}, nil
				}))
		})
	})
}
