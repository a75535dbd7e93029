// Package feedfake serves fakes of the four providers' APIs that sync
// reads (marketstack v2, Tiingo, EODHD, Stooq) over one dataset, for the
// adapters' tests, `make sync-demo` and the sync benchmarks. Every answer
// is written from the provider's public documentation, never copied from
// a real response; each fake checks that a request is what the real API
// expects (path, parameters, where the credential goes) and refuses it as
// the real API documents when it is not (401 for a missing or wrong key,
// 404 or 422 for an unknown symbol, 422 for a page over 1000).
package feedfake

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bar is one daily bar as the fakes answer it. Values are text so that a
// test can serve a malformed one; a value that reads as a number is
// written as a JSON number, any other as a JSON string.
type Bar struct{ Date, Open, High, Low, Close, Volume string }

// Fake is the dataset the four fakes serve.
type Fake struct {
	// Token is the credential every keyed API expects.
	Token string
	// Synthetic adds symbols S00000 to S<n-1>, listed on XNAS, with a bar
	// every weekday computed on the fly (none held in memory), for the
	// benchmarks' universes. SetNames renames the first of them.
	Synthetic int
	// OutOfWindow answers every stored bar whatever the dates asked, as
	// an upstream with a bug would.
	OutOfWindow bool

	mu       sync.Mutex
	bars     map[string]map[string]Bar
	splits   map[string]map[string]float64
	divs     map[string]map[string]float64
	faults   []*fault
	requests int
	// bulkDays keeps the bulk answer of each day served (bulkDaysKept at
	// most), until a bar is restated: a provider serves a finished day
	// from its own store, and rendering 50,000 bars again for every
	// request put the fake's CPU, not the sync's, into the sync
	// benchmark's window on shared cores.
	bulkDays map[string][]byte
	// restated counts the changes that drop bulkDays, so that a day
	// rendered while one happened is served but not kept.
	restated uint64
	// names are the names of the first synthetic symbols (SetNames), and
	// nameIndex their indexes.
	names     []string
	nameIndex map[string]int
}

// dropBulkDays forgets the rendered days after a change to what they
// hold; f.mu is held.
func (f *Fake) dropBulkDays() {
	f.bulkDays = nil
	f.restated++
}

// bulkDaysKept bounds the bulk answers kept: about 6 MB each at 50,000
// symbols.
const bulkDaysKept = 8

type fault struct {
	path       string
	status     int
	retryAfter string
	times      int
}

// New returns an empty fake expecting token.
func New(token string) *Fake {
	return &Fake{Token: token, bars: map[string]map[string]Bar{}, splits: map[string]map[string]float64{}, divs: map[string]map[string]float64{}}
}

// SetBar adds or restates symbol's bar of b.Date.
func (f *Fake) SetBar(symbol string, b Bar) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bars[symbol] == nil {
		f.bars[symbol] = map[string]Bar{}
	}
	f.bars[symbol][b.Date] = b
	f.dropBulkDays()
}

// SetSplit adds a split (new shares per old) with ex-date date.
func (f *Fake) SetSplit(symbol, date string, factor float64) {
	f.setAction(f.splits, symbol, date, factor)
}

// SetDividend adds a cash dividend with ex-date date.
func (f *Fake) SetDividend(symbol, date string, amount float64) {
	f.setAction(f.divs, symbol, date, amount)
}

func (f *Fake) setAction(m map[string]map[string]float64, symbol, date string, v float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m[symbol] == nil {
		m[symbol] = map[string]float64{}
	}
	m[symbol][date] = v
}

// Fail answers the next times requests whose path contains path with
// status, and a Retry-After header when retryAfter is set.
func (f *Fake) Fail(path string, status int, retryAfter string, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &fault{path: path, status: status, retryAfter: retryAfter, times: times})
}

// Requests counts the requests served, faults included.
func (f *Fake) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// injected answers the request with a pending fault, if one matches.
func (f *Fake) injected(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	for _, ft := range f.faults {
		if ft.times > 0 && strings.Contains(r.URL.Path, ft.path) {
			ft.times--
			if ft.retryAfter != "" {
				w.Header().Set("Retry-After", ft.retryAfter)
			}
			http.Error(w, http.StatusText(ft.status), ft.status)
			return true
		}
	}
	return false
}

// Handler serves the four fakes on one server, for the demo: marketstack
// under /marketstack/v2, Tiingo at /tiingo, EODHD under /eodhd and Stooq
// under /stooq.
func (f *Fake) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/marketstack/v2/", http.StripPrefix("/marketstack/v2", f.Marketstack()))
	mux.Handle("/tiingo/", f.Tiingo())
	mux.Handle("/eodhd/", http.StripPrefix("/eodhd", f.EODHD()))
	mux.Handle("/stooq/", http.StripPrefix("/stooq", f.Stooq()))
	return mux
}

// SetNames names synthetic symbol i names[i] instead of S<i>, for the
// first len(names) of them (the rest keep their S names): a universe
// served under the symbols a database already holds, so that its day
// updates them. It is set before the fake serves.
func (f *Fake) SetNames(names []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names = names
	f.nameIndex = make(map[string]int, len(names))
	for i, n := range names {
		f.nameIndex[n] = i
	}
	f.dropBulkDays()
}

// known tells whether the dataset has symbol.
func (f *Fake) known(symbol string) bool {
	f.mu.Lock()
	_, ok := f.bars[symbol]
	f.mu.Unlock()
	if ok {
		return true
	}
	_, ok = f.synthetic(symbol)
	return ok
}

// synthetic returns the index of symbol when it is one of the synthetic
// symbols. The names (SetNames) are not changed while the fake serves,
// so they are read without the lock.
func (f *Fake) synthetic(symbol string) (int, bool) {
	if i, ok := f.nameIndex[symbol]; ok {
		return i, i < f.Synthetic
	}
	if len(symbol) != 6 || symbol[0] != 'S' {
		return 0, false
	}
	i, err := strconv.Atoi(symbol[1:])
	return i, err == nil && i >= len(f.names) && i < f.Synthetic
}

// syntheticName is the symbol of synthetic symbol i.
func (f *Fake) syntheticName(i int) string {
	if i < len(f.names) {
		return f.names[i]
	}
	return SyntheticSymbol(i)
}

// SyntheticSymbol names the synthetic symbol i.
func SyntheticSymbol(i int) string { return fmt.Sprintf("S%05d", i) }

// syntheticBar is symbol i's bar of day d (a weekday).
func syntheticBar(i int, d time.Time) Bar {
	n := d.Unix() / 86400
	c := 10 + float64(i%500) + float64((n+int64(i))%40)/10
	f := func(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }
	return Bar{Date: d.Format(time.DateOnly), Open: f(c - 0.05), High: f(c + 0.1), Low: f(c - 0.15), Close: f(c), Volume: strconv.Itoa(1000 + i)}
}

// series returns symbol's bars dated within [from, to], oldest first.
func (f *Fake) series(symbol string, from, to time.Time) []Bar {
	if i, ok := f.synthetic(symbol); ok {
		f.mu.Lock()
		restated := f.bars[symbol] // a synthetic bar restated with SetBar
		f.mu.Unlock()
		var out []Bar
		for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
			if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
				b, ok := restated[d.Format(time.DateOnly)]
				if !ok {
					b = syntheticBar(i, d)
				}
				out = append(out, b)
			}
		}
		return out
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Bar
	for date, b := range f.bars[symbol] {
		if f.OutOfWindow || within(date, from, to) {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b Bar) int { return strings.Compare(a.Date, b.Date) })
	return out
}

// actions returns symbol's splits or dividends within [from, to] by date.
func (f *Fake) actions(m map[string]map[string]float64, symbol string, from, to time.Time) [][2]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][2]string
	for date, v := range m[symbol] {
		if within(date, from, to) {
			out = append(out, [2]string{date, strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// day returns every symbol's bar of date: the stored ones, then the
// synthetic universe's, through emit.
func (f *Fake) day(date time.Time, emit func(symbol string, b Bar)) {
	ds := date.Format(time.DateOnly)
	f.mu.Lock()
	var stored [][2]any
	restated := map[string]Bar{}
	for sym, bars := range f.bars {
		if b, ok := bars[ds]; ok {
			if _, ok := f.synthetic(sym); ok {
				restated[sym] = b
				continue
			}
			stored = append(stored, [2]any{sym, b})
		}
	}
	f.mu.Unlock()
	slices.SortFunc(stored, func(a, b [2]any) int { return strings.Compare(a[0].(string), b[0].(string)) })
	for _, s := range stored {
		emit(s[0].(string), s[1].(Bar))
	}
	if wd := date.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return
	}
	for i := range f.Synthetic {
		sym := f.syntheticName(i)
		if b, ok := restated[sym]; ok {
			emit(sym, b)
			continue
		}
		emit(sym, syntheticBar(i, date))
	}
}

// firstDay is the first date of symbol's history: its first stored bar,
// or for a synthetic symbol SyntheticStart.
func (f *Fake) firstDay(symbol string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	first := ""
	for date := range f.bars[symbol] {
		if first == "" || date < first {
			first = date
		}
	}
	if _, ok := f.synthetic(symbol); ok {
		first = SyntheticStart
	}
	return first
}

// SyntheticStart is where the synthetic symbols' history begins, as the
// providers' metadata says (their bars are computed for any weekday).
const SyntheticStart = "2004-01-02"

func within(date string, from, to time.Time) bool {
	d, err := time.Parse(time.DateOnly, date)
	return err == nil && !d.Before(from) && !d.After(to)
}

// jsonValue writes v as a JSON number when it reads as one, else as a
// JSON string (a malformed value a test serves).
func jsonValue(v string) string {
	if x, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(x, 0) && !math.IsNaN(x) {
		return v
	}
	return strconv.Quote(v)
}

// barJSON writes b's fields in a JSON object, with extra fields after.
func barJSON(b Bar, extra string) string {
	return fmt.Sprintf(`"date":%q,"open":%s,"high":%s,"low":%s,"close":%s,"volume":%s%s`,
		b.Date, jsonValue(b.Open), jsonValue(b.High), jsonValue(b.Low), jsonValue(b.Close), jsonValue(b.Volume), extra)
}

// dates reads the two date parameters a request must carry, in layout.
func dates(r *http.Request, fromName, toName, layout string) (from, to time.Time, err error) {
	from, err1 := time.Parse(layout, r.URL.Query().Get(fromName))
	to, err2 := time.Parse(layout, r.URL.Query().Get(toName))
	if err1 != nil || err2 != nil {
		return from, to, fmt.Errorf("%s and %s must be dates (%s)", fromName, toName, layout)
	}
	return from, to, nil
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}
