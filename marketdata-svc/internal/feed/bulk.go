package feed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// bulk syncs an exchange day by day through one call a day, each day in
// one load streamed from the provider's spooled answer. Its progress is
// kept under the symbol "@" and the exchange. done is false when the
// provider does not cover the exchange, for the per-symbol path to run.
func (r *runner) bulk(ctx context.Context, b Bulk) (done bool, err error) {
	key := "@" + r.o.Exchange
	prog, err := r.store.SyncProgress(ctx, r.p.Name(), []string{key})
	if err != nil {
		return true, err
	}
	p, synced := prog[key]
	start := r.start(p, synced, time.Time{}, r.o.To) // a universe starts with the last session
	var days []time.Time
	for d := start; !d.After(r.o.To); d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			days = append(days, d)
		}
	}
	r.o.Meter.Start(len(days))
	r.bulkSymbols = nil
	defer func() { r.rep.Symbols, r.rep.Synced = len(r.bulkSymbols), len(r.bulkSymbols) }()
	for i, day := range days {
		ok, err := r.bulkDay(ctx, b, day)
		if !ok && i == 0 {
			return false, nil
		}
		switch {
		case errors.Is(err, ErrUnauthorized):
			r.rep.Fatal = err
			return true, nil
		case err != nil && ctx.Err() != nil:
			return true, ctx.Err()
		case err != nil:
			r.fail(key+" "+day.Format(time.DateOnly), err)
		}
		r.o.Meter.Add(1, 0)
	}
	return true, nil
}

// bulkDay loads one exchange day; ok is false when the provider does not
// cover the exchange.
func (r *runner) bulkDay(ctx context.Context, b Bulk, day time.Time) (ok bool, err error) {
	d, ok, err := b.ExchangeDay(ctx, r.o.Exchange, day)
	if err != nil || !ok {
		return ok, err
	}
	defer d.Close()
	for _, rj := range d.Rejects {
		r.reject(rj)
	}
	w := Window{From: day, To: day}
	first := true // rejects are reported once, on the first pass
	l := ingest.Load{DefaultExchange: r.o.Exchange, Splits: d.Splits, Dividends: d.Dividends}
	l.Bars = func() (ingest.BarSource, error) {
		rs, err := d.Records()
		if err != nil {
			return nil, err
		}
		src := &dayBars{rs: rs, w: w, provider: r.p.Name()}
		if first {
			first, src.reject = false, r.reject
		}
		return src, nil
	}
	res, err := importer.Load(ctx, r.store, l)
	if err != nil {
		return true, fmt.Errorf("load %s: %w", day.Format(time.DateOnly), err)
	}
	if len(res.Symbols) == 0 {
		return true, nil // a holiday: nothing to record, asked again next time
	}
	err = r.store.SaveSyncProgress(ctx, r.p.Name(), []ingest.SyncWindow{{Symbol: "@" + r.o.Exchange, From: day, Through: day}})
	if err != nil {
		return true, err
	}
	r.bulkSymbols = union(r.bulkSymbols, res.Symbols)
	r.rep.Received += res.BarsRead
	r.rep.Stored += res.BarsChanged
	r.o.Meter.Add(0, res.BarsRead)
	if err := r.o.Publish(ctx, res.Version); err != nil {
		r.o.Log.Error("publish data version", "version", res.Version, "err", err)
	}
	return true, nil
}

// union merges two sorted lists of distinct symbols into one.
func union(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	out := make([]string, 0, max(len(a), len(b)))
	for len(a) > 0 && len(b) > 0 {
		switch c := strings.Compare(a[0], b[0]); {
		case c < 0:
			out, a = append(out, a[0]), a[1:]
		case c > 0:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// dayBars streams a day's checked bars from its records.
type dayBars struct {
	rs       RecordSource
	w        Window
	provider string
	cur      ingest.BarRow
	reject   func(Reject)
}

func (s *dayBars) Next() bool {
	for s.rs.Next() {
		rec := s.rs.Record()
		b, reason := bar(rec, s.w)
		if reason == "" && rec.Symbol == "" {
			reason = "empty symbol"
		}
		if reason == "" {
			if err := importer.CheckBar(b); err != nil {
				reason = err.Error()
			}
		}
		if reason != "" {
			if s.reject != nil {
				s.reject(Reject{Provider: s.provider, Symbol: rec.Symbol, Date: rec.Date, Reason: reason})
			}
			continue
		}
		s.cur = b
		return true
	}
	return false
}

func (s *dayBars) Bar() ingest.BarRow { return s.cur }
func (s *dayBars) Err() error         { return s.rs.Err() }
