package feed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// Store is what a sync reads and writes; *ingest.Store is one. Bars
// are written through importer.Load only.
type Store interface {
	importer.Applier
	LastBarDates(ctx context.Context, symbols []string) (map[string]time.Time, error)
	SyncProgress(ctx context.Context, provider string, symbols []string) (map[string]ingest.SyncWindow, error)
	SaveSyncProgress(ctx context.Context, provider string, windows []ingest.SyncWindow) error
	SyncSymbols(ctx context.Context, exchange string) ([]string, error)
	StartSyncRun(ctx context.Context, provider string) error
	EndSyncRun(ctx context.Context, provider, status string, rows int64, failed int) error
}

// Options steer a run.
type Options struct {
	// Symbols to sync; else those of Exchange (a MIC) the store lists (or
	// the provider does, when the store lists none); else, with All,
	// every symbol with daily data.
	Symbols  []string
	Exchange string
	All      bool
	// From starts every symbol's window (zero: incremental, from the day
	// after what is stored or was synced); To ends it (required).
	From, To time.Time
	// BackfillFrom starts an incremental window of a symbol with nothing
	// stored yet.
	BackfillFrom time.Time
	// Lookback re-fetches this many days before an incremental start, so
	// that bars the provider restated since are taken.
	Lookback int
	// Refetch ignores the windows already synced (sync_progress): a
	// re-run of a window to take its corrections.
	Refetch bool
	// Concurrency is how many symbols are fetched at once.
	Concurrency int
	// BatchRows bounds the bars held before a load (default 100,000).
	BatchRows int
	Log       *slog.Logger
	// Meter shows progress; nil shows none.
	Meter *Meter
	// Publish announces a committed data version to the caches.
	Publish func(ctx context.Context, version int64) error
}

// Failure is a symbol (or a bulk day, "@" and the exchange) that could
// not be synced.
type Failure struct{ Symbol, Reason string }

// Report is a run's outcome.
type Report struct {
	Provider string
	// Symbols is how many were asked for, UpToDate how many had nothing to
	// fetch, Synced how many were fetched and stored.
	Symbols, UpToDate, Synced int
	// Received counts the bars the provider sent that passed the checks,
	// Stored those new or changed.
	Received, Stored int64
	Rejects          []Reject
	Failed           []Failure
	// Fatal stopped the run (a refused credential).
	Fatal error
}

// Exit codes of `marketdata-svc sync`.
const (
	ExitOK      = 0
	ExitNothing = 1 // nothing could be synced (a bad token, the store down)
	ExitPartial = 3 // some symbols failed, the others are stored
)

// ExitCode is the run's exit status.
func (r Report) ExitCode() int {
	switch {
	case r.Fatal != nil:
		return ExitNothing
	case len(r.Failed) > 0 && r.Synced == 0 && r.UpToDate == 0:
		return ExitNothing
	case len(r.Failed) > 0:
		return ExitPartial
	}
	return ExitOK
}

// Status is "ok", "partial" or "failed", as sync_runs records it.
func (r Report) Status() string {
	switch r.ExitCode() {
	case ExitOK:
		return "ok"
	case ExitPartial:
		return "partial"
	}
	return "failed"
}

// Run syncs p into store as o says. Its error is one that stopped it
// before any symbol was tried (the store unreachable); a symbol's failure
// or a refused credential is in the report.
func Run(ctx context.Context, p Provider, store Store, o Options) (Report, error) {
	rep := Report{Provider: p.Name()}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.Concurrency = max(o.Concurrency, 1)
	if o.BatchRows <= 0 {
		o.BatchRows = 100_000
	}
	if o.Publish == nil {
		o.Publish = func(context.Context, int64) error { return nil }
	}
	if o.To.IsZero() {
		return rep, errors.New("sync: no end date")
	}
	if err := store.StartSyncRun(ctx, p.Name()); err != nil {
		return rep, err
	}
	r := &runner{p: p, store: store, o: o, rep: &rep}
	err := r.run(ctx)
	if err != nil && rep.Fatal == nil {
		rep.Fatal = err
	}
	o.Meter.Finish()
	slices.SortFunc(rep.Failed, func(a, b Failure) int { return cmp.Compare(a.Symbol, b.Symbol) })
	if err := store.EndSyncRun(context.WithoutCancel(ctx), p.Name(), rep.Status(), rep.Stored, len(rep.Failed)); err != nil {
		o.Log.Error("record sync run", "provider", p.Name(), "err", err)
	}
	return rep, nil
}

type runner struct {
	p     Provider
	store Store
	o     Options
	rep   *Report
	mu    sync.Mutex // rep, from the fetch workers
	// bulkSymbols are the symbols a bulk run stored, over all its days,
	// sorted.
	bulkSymbols []string
}

func (r *runner) run(ctx context.Context) error {
	if b, ok := r.p.(Bulk); ok && r.o.Exchange != "" && len(r.o.Symbols) == 0 {
		done, err := r.bulk(ctx, b)
		if done || err != nil {
			return err
		}
	}
	symbols, err := r.symbols(ctx)
	if err != nil {
		return err
	}
	r.rep.Symbols = len(symbols)
	jobs, err := r.plan(ctx, symbols)
	if err != nil {
		return err
	}
	r.rep.UpToDate = len(symbols) - len(jobs)
	r.o.Meter.Start(len(symbols))
	r.o.Meter.Add(r.rep.UpToDate, 0)
	return r.fetchAndStore(ctx, jobs)
}

// symbols resolves the run's symbols.
func (r *runner) symbols(ctx context.Context) ([]string, error) {
	if len(r.o.Symbols) > 0 {
		return r.o.Symbols, nil
	}
	if r.o.Exchange == "" && !r.o.All {
		return nil, errors.New("sync: give --symbols, --exchange or --all")
	}
	syms, err := r.store.SyncSymbols(ctx, r.o.Exchange)
	if err != nil {
		return nil, err
	}
	if l, ok := r.p.(Lister); ok && len(syms) == 0 && r.o.Exchange != "" {
		if syms, err = l.Symbols(ctx, r.o.Exchange); err != nil {
			return nil, fmt.Errorf("list %s symbols: %w", r.o.Exchange, err)
		}
	}
	return syms, nil
}

// start is the first day of a window whose progress is p (when synced)
// and whose last stored bar is lastStored (zero: none): --from, or, when
// the run resumes a --from window already begun, the day after what it
// synced; without --from, the day after the later of the two, less the
// lookback; fresh when there is neither.
func (r *runner) start(p ingest.SyncWindow, synced bool, lastStored, fresh time.Time) time.Time {
	synced = synced && !r.o.Refetch
	if from := r.o.From; !from.IsZero() {
		if synced && !p.From.After(from) && !p.Through.Before(from) {
			return p.Through.AddDate(0, 0, 1)
		}
		return from
	}
	last := lastStored
	if synced && p.Through.After(last) {
		last = p.Through
	}
	if last.IsZero() {
		return fresh
	}
	return last.AddDate(0, 0, 1-r.o.Lookback)
}

type job struct {
	symbol string
	w      Window
	// fresh: nothing of the symbol is stored or synced, and no --from.
	fresh bool
}

// plan gives each symbol its window, and leaves out those up to date.
func (r *runner) plan(ctx context.Context, symbols []string) ([]job, error) {
	var jobs []job
	for chunk := range slices.Chunk(symbols, 10_000) {
		last, err := r.store.LastBarDates(ctx, chunk)
		if err != nil {
			return nil, err
		}
		prog, err := r.store.SyncProgress(ctx, r.p.Name(), chunk)
		if err != nil {
			return nil, err
		}
		for _, s := range chunk {
			p, synced := prog[s]
			start := r.start(p, synced, last[s], r.o.BackfillFrom)
			if start.After(r.o.To) {
				continue
			}
			fresh := r.o.From.IsZero() && last[s].IsZero() && !synced
			jobs = append(jobs, job{symbol: s, w: Window{From: start, To: r.o.To}, fresh: fresh})
		}
	}
	return jobs, nil
}

// fetched is one symbol's answer, checked.
type fetched struct {
	job
	bars      []ingest.BarRow
	splits    []marketdata.Split
	dividends []marketdata.Dividend
}

// fetchAndStore fetches the jobs' symbols, Concurrency at a time, and
// stores them in loads of at most BatchRows bars, in the order they come.
func (r *runner) fetchAndStore(ctx context.Context, jobs []job) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	queue := make(chan job)
	results := make(chan fetched, r.o.Concurrency)
	go func() {
		defer close(queue)
		for _, j := range jobs {
			select {
			case queue <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range r.o.Concurrency {
		wg.Go(func() {
			for j := range queue {
				f, err := r.fetch(ctx, j)
				if err != nil {
					if errors.Is(err, ErrUnauthorized) {
						cancel(err)
						return
					}
					if ctx.Err() != nil {
						return
					}
					r.fail(j.symbol, err)
					r.o.Meter.Add(1, 0)
					continue
				}
				select {
				case results <- f:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(results) }()
	var batch []fetched
	rows := 0
	for f := range results {
		batch = append(batch, f)
		rows += len(f.bars)
		if rows >= r.o.BatchRows || len(batch) >= 1000 {
			r.store1(ctx, batch)
			batch, rows = nil, 0
		}
	}
	if len(batch) > 0 {
		r.store1(ctx, batch)
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		r.rep.Fatal = err
		return nil
	}
	return ctx.Err()
}

func (r *runner) fail(symbol string, err error) {
	reason := err.Error()
	if errors.Is(err, ErrUnknownSymbol) {
		reason = ErrUnknownSymbol.Error()
	}
	r.o.Log.Warn("symbol not synced", "provider", r.p.Name(), "symbol", symbol, "reason", reason)
	r.mu.Lock()
	r.rep.Failed = append(r.rep.Failed, Failure{Symbol: symbol, Reason: reason})
	r.mu.Unlock()
}

func (r *runner) reject(rj Reject) {
	r.o.Log.Warn("record refused", "provider", rj.Provider, "symbol", rj.Symbol, "date", rj.Date, "reason", rj.Reason)
	r.mu.Lock()
	r.rep.Rejects = append(r.rep.Rejects, rj)
	r.mu.Unlock()
}

// fetch asks for one symbol and checks its answer: bad records are
// reported and left out; a bar sent twice keeps its last value.
func (r *runner) fetch(ctx context.Context, j job) (fetched, error) {
	if st, ok := r.p.(Starter); ok && j.fresh {
		first, err := st.FirstDay(ctx, j.symbol)
		if err != nil {
			return fetched{}, err
		}
		if first.After(j.w.From) {
			j.w.From = first
		}
		if j.w.From.After(j.w.To) {
			return fetched{job: j}, nil
		}
	}
	h, err := r.p.History(ctx, j.symbol, j.w)
	if err != nil {
		return fetched{}, err
	}
	for _, rj := range h.Rejects {
		r.reject(rj)
	}
	f := fetched{job: j}
	at := map[time.Time]int{}
	for _, rec := range h.Records {
		rec.Symbol = j.symbol
		b, reason := bar(rec, j.w)
		if reason == "" {
			if err := importer.CheckBar(b); err != nil {
				reason = err.Error()
			}
		}
		if reason != "" {
			r.reject(Reject{Provider: r.p.Name(), Symbol: j.symbol, Date: rec.Date, Reason: reason})
			continue
		}
		if i, ok := at[b.Date]; ok {
			f.bars[i] = b
			continue
		}
		at[b.Date] = len(f.bars)
		f.bars = append(f.bars, b)
	}
	for _, s := range h.Splits {
		if j.w.Contains(s.Date) {
			s.Symbol = j.symbol
			f.splits = append(f.splits, s)
		}
	}
	for _, d := range h.Dividends {
		if j.w.Contains(d.Date) {
			d.Symbol = j.symbol
			f.dividends = append(f.dividends, d)
		}
	}
	return f, nil
}

// store1 loads a batch in one transaction; when it fails, each symbol is
// loaded alone, so that one symbol's failure is its own.
func (r *runner) store1(ctx context.Context, batch []fetched) {
	if err := r.load(ctx, batch); err != nil {
		if len(batch) == 1 || ctx.Err() != nil {
			for _, f := range batch {
				r.fail(f.symbol, err)
				r.o.Meter.Add(1, 0)
			}
			return
		}
		for _, f := range batch {
			r.store1(ctx, []fetched{f})
		}
	}
}

func (r *runner) load(ctx context.Context, batch []fetched) error {
	var bars []ingest.BarRow
	var l ingest.Load
	var windows []ingest.SyncWindow
	for _, f := range batch {
		bars = append(bars, f.bars...)
		l.Splits = append(l.Splits, f.splits...)
		l.Dividends = append(l.Dividends, f.dividends...)
		if len(f.bars) > 0 {
			through := f.bars[0].Date
			for _, b := range f.bars {
				if b.Date.After(through) {
					through = b.Date
				}
			}
			windows = append(windows, ingest.SyncWindow{Symbol: f.symbol, From: f.w.From, Through: through})
		}
	}
	if len(bars) > 0 {
		l.Bars = func() (ingest.BarSource, error) { return &barSlice{bars: bars, i: -1}, nil }
	}
	l.DefaultExchange = r.o.Exchange
	res, err := importer.Load(ctx, r.store, l)
	if err != nil {
		return err
	}
	if err := r.store.SaveSyncProgress(ctx, r.p.Name(), windows); err != nil {
		return err
	}
	r.rep.Synced += len(batch)
	r.rep.Received += int64(len(bars))
	r.rep.Stored += res.BarsChanged
	r.o.Meter.Add(len(batch), int64(len(bars)))
	if err := r.o.Publish(ctx, res.Version); err != nil {
		r.o.Log.Error("publish data version", "version", res.Version, "err", err)
	}
	return nil
}

// barSlice is a BarSource over bars in memory.
type barSlice struct {
	bars []ingest.BarRow
	i    int
}

func (s *barSlice) Next() bool         { s.i++; return s.i < len(s.bars) }
func (s *barSlice) Bar() ingest.BarRow { return s.bars[s.i] }
func (s *barSlice) Err() error         { return nil }
