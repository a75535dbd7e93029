package feedfake

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Marketstack serves marketstack v2's /eod, /splits, /dividends and
// /tickers: the key in access_key (401 missing_access_key or
// invalid_access_key), results newest first in {pagination, data} pages
// of limit (at most 1000, else 422 validation_error) from offset, and 422
// no_valid_symbols_provided for a symbol it does not know.
func (f *Fake) Marketstack() http.Handler {
	msErr := func(w http.ResponseWriter, status int, code, msg string) {
		writeJSON(w, status, fmt.Sprintf(`{"error":{"code":%q,"message":%q}}`, code, msg))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.injected(w, r) {
			return
		}
		q := r.URL.Query()
		switch key := q.Get("access_key"); {
		case key == "":
			msErr(w, 401, "missing_access_key", "You have not supplied an API Access Key.")
			return
		case key != f.Token:
			msErr(w, 401, "invalid_access_key", "You have not supplied a valid API Access Key.")
			return
		}
		limit, offset := 100, 0
		if v := q.Get("limit"); v != "" {
			limit, _ = strconv.Atoi(v)
		}
		if v := q.Get("offset"); v != "" {
			offset, _ = strconv.Atoi(v)
		}
		if limit < 1 || limit > 1000 || offset < 0 {
			msErr(w, 422, "validation_error", "limit must be between 1 and 1000")
			return
		}
		var rows []string
		switch r.URL.Path {
		case "/tickers":
			mic := q.Get("exchange")
			f.mu.Lock()
			for sym := range f.bars {
				rows = append(rows, fmt.Sprintf(`{"name":%q,"symbol":%q,"stock_exchange":{"mic":%q}}`, sym, sym, mic))
			}
			f.mu.Unlock()
			slices.Sort(rows)
		case "/eod", "/splits", "/dividends":
			sym := q.Get("symbols")
			from, to, err := dates(r, "date_from", "date_to", time.DateOnly)
			if sym == "" || strings.Contains(sym, ",") || err != nil {
				msErr(w, 422, "validation_error", "symbols (one) and date_from, date_to (YYYY-MM-DD) are expected by this fake")
				return
			}
			if !f.known(sym) {
				msErr(w, 422, "no_valid_symbols_provided", "No valid symbols were provided.")
				return
			}
			switch r.URL.Path {
			case "/eod":
				bars := f.series(sym, from, to)
				slices.Reverse(bars) // newest first, marketstack's default sort
				for _, b := range bars {
					rows = append(rows, "{"+barJSON(b, fmt.Sprintf(`,"symbol":%q,"exchange":"XNAS"`, sym))+"}")
				}
			case "/splits":
				for _, a := range f.actions(f.splits, sym, from, to) {
					rows = append(rows, fmt.Sprintf(`{"date":%q,"split_factor":%s,"symbol":%q}`, a[0], a[1], sym))
				}
			default:
				for _, a := range f.actions(f.divs, sym, from, to) {
					rows = append(rows, fmt.Sprintf(`{"date":%q,"dividend":%s,"symbol":%q}`, a[0], a[1], sym))
				}
			}
		default:
			msErr(w, 404, "invalid_api_function", "This API Function does not exist.")
			return
		}
		total := len(rows)
		page := rows[min(offset, total):min(offset+limit, total)]
		writeJSON(w, 200, fmt.Sprintf(`{"pagination":{"limit":%d,"offset":%d,"count":%d,"total":%d},"data":[%s]}`,
			limit, offset, len(page), total, strings.Join(page, ",")))
	})
}

// Tiingo serves /tiingo/daily/{ticker}/prices (startDate, endDate) and
// /tiingo/daily/{ticker}: the token in "Authorization: Token ..." only (a
// token in the URL is refused: it would be logged), 404 {"detail": ...}
// for an unknown ticker, rows oldest first with divCash and splitFactor.
func (f *Fake) Tiingo() http.Handler {
	detail := func(w http.ResponseWriter, status int, msg string) {
		writeJSON(w, status, fmt.Sprintf(`{"detail":%q}`, msg))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.injected(w, r) {
			return
		}
		if r.URL.Query().Has("token") {
			detail(w, 400, "this fake wants the token in the Authorization header")
			return
		}
		switch auth := r.Header.Get("Authorization"); {
		case auth == "":
			detail(w, 401, "Please supply a token")
			return
		case auth != "Token "+f.Token:
			detail(w, 401, "Invalid token.")
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, "/tiingo/daily/")
		if !ok {
			detail(w, 404, "Not found.")
			return
		}
		ticker, prices := strings.CutSuffix(rest, "/prices")
		sym := strings.ToUpper(ticker)
		if !f.known(sym) {
			detail(w, 404, fmt.Sprintf("Error: Ticker '%s' not found", ticker))
			return
		}
		if !prices {
			writeJSON(w, 200, fmt.Sprintf(`{"ticker":%q,"name":%q,"exchangeCode":"NASDAQ","startDate":%q,"endDate":"2099-12-31","description":""}`, strings.ToLower(sym), sym+" Inc", f.firstDay(sym)))
			return
		}
		from, to, err := dates(r, "startDate", "endDate", time.DateOnly)
		if err != nil {
			detail(w, 400, err.Error())
			return
		}
		splits, divs := map[string]string{}, map[string]string{}
		for _, a := range f.actions(f.splits, sym, from, to) {
			splits[a[0]] = a[1]
		}
		for _, a := range f.actions(f.divs, sym, from, to) {
			divs[a[0]] = a[1]
		}
		var rows []string
		for _, b := range f.series(sym, from, to) {
			sf, dc := cmpOr(splits[b.Date], "1.0"), cmpOr(divs[b.Date], "0.0")
			rows = append(rows, "{"+strings.Replace(barJSON(b, fmt.Sprintf(`,"adjClose":%s,"divCash":%s,"splitFactor":%s`, jsonValue(b.Close), dc, sf)),
				`"date":"`+b.Date+`"`, `"date":"`+b.Date+`T00:00:00.000Z"`, 1)+"}")
		}
		writeJSON(w, 200, "["+strings.Join(rows, ",")+"]")
	})
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// EODHD serves /api/eod/{CODE}.{EXCHANGE}, /api/splits/..., /api/div/...
// (from, to) and /api/eod-bulk-last-day/{EXCHANGE} (date, type), with
// fmt=json: the key in api_token (401 "Unauthenticated" without a valid
// one), 404 "Ticker Not Found." for an unknown symbol. Only US symbols
// (CODE.US) are in the dataset.
func (f *Fake) EODHD() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.injected(w, r) {
			return
		}
		q := r.URL.Query()
		if q.Get("api_token") != f.Token {
			writeJSON(w, 401, `{"message":"Unauthenticated"}`)
			return
		}
		if q.Get("fmt") != "json" {
			http.Error(w, "this fake answers fmt=json only", 400)
			return
		}
		if ex, ok := strings.CutPrefix(r.URL.Path, "/api/eod-bulk-last-day/"); ok {
			f.eodhdBulk(w, r, ex)
			return
		}
		var kind, code string
		for _, k := range []string{"eod", "splits", "div"} {
			if c, ok := strings.CutPrefix(r.URL.Path, "/api/"+k+"/"); ok {
				kind, code = k, c
			}
		}
		sym, us := strings.CutSuffix(code, ".US")
		if kind == "" || !us || !f.known(sym) {
			http.Error(w, "Ticker Not Found.", 404)
			return
		}
		from, to, err := dates(r, "from", "to", time.DateOnly)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		var rows []string
		switch kind {
		case "eod":
			for _, b := range f.series(sym, from, to) {
				rows = append(rows, "{"+barJSON(b, `,"adjusted_close":`+jsonValue(b.Close))+"}")
			}
		case "splits":
			for _, a := range f.actions(f.splits, sym, from, to) {
				rows = append(rows, fmt.Sprintf(`{"date":%q,"split":"%s/1.000000"}`, a[0], a[1]))
			}
		default:
			for _, a := range f.actions(f.divs, sym, from, to) {
				rows = append(rows, fmt.Sprintf(`{"date":%q,"value":%s,"unadjustedValue":%s,"currency":"USD"}`, a[0], a[1], a[1]))
			}
		}
		writeJSON(w, 200, "["+strings.Join(rows, ",")+"]")
	})
}

// eodhdBulk writes a whole day of exchange ex. A day's bars are rendered
// once and kept (bulkDays); the splits and dividends of a day, a handful,
// are written as they are read.
func (f *Fake) eodhdBulk(w http.ResponseWriter, r *http.Request, ex string) {
	if ex != "US" {
		http.Error(w, "Exchange Not Found.", 404)
		return
	}
	date, err := time.Parse(time.DateOnly, r.URL.Query().Get("date"))
	if err != nil {
		http.Error(w, "date must be YYYY-MM-DD", http.StatusUnprocessableEntity)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	typ := r.URL.Query().Get("type")
	if typ != "splits" && typ != "dividends" {
		w.Write(f.bulkDay(date))
		return
	}
	m := f.splits
	if typ == "dividends" {
		m = f.divs
	}
	f.mu.Lock()
	syms := make([]string, 0, len(m))
	for s := range m {
		syms = append(syms, s)
	}
	f.mu.Unlock()
	slices.Sort(syms)
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	bw.WriteString("[")
	first := true
	for _, s := range syms {
		for _, a := range f.actions(m, s, date, date) {
			if !first {
				bw.WriteString(",")
			}
			first = false
			if typ == "splits" {
				fmt.Fprintf(bw, `{"code":%q,"exchange":"US","date":%q,"split":"%s/1.000000"}`, s, a[0], a[1])
			} else {
				fmt.Fprintf(bw, `{"code":%q,"exchange":"US","date":%q,"dividend":%s,"currency":"USD"}`, s, a[0], a[1])
			}
		}
	}
	bw.WriteString("]")
}

// bulkDay is the bulk answer of date's bars, rendered on the first
// request for it.
func (f *Fake) bulkDay(date time.Time) []byte {
	key := date.Format(time.DateOnly)
	f.mu.Lock()
	body, ok := f.bulkDays[key]
	gen := f.restated
	f.mu.Unlock()
	if ok {
		return body
	}
	body = f.renderDay(date)
	f.keepDay(key, gen, body)
	return body
}

// renderDay writes date's bars as EODHD's bulk endpoint answers them.
func (f *Fake) renderDay(date time.Time) []byte {
	var buf bytes.Buffer
	buf.WriteString("[")
	first := true
	f.day(date, func(sym string, b Bar) {
		if !first {
			buf.WriteString(",")
		}
		first = false
		fmt.Fprintf(&buf, `{"code":%q,"exchange_short_name":"US",%s}`, sym, barJSON(b, `,"adjusted_close":`+jsonValue(b.Close)))
	})
	buf.WriteString("]")
	return buf.Bytes()
}

// keepDay keeps the day rendered as body for the next requests, unless a
// bar changed since gen: the render ran outside the lock and may hold
// the old bar, so it is served once and not kept.
func (f *Fake) keepDay(key string, gen uint64, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.restated != gen {
		return
	}
	if f.bulkDays == nil || len(f.bulkDays) >= bulkDaysKept {
		f.bulkDays = map[string][]byte{}
	}
	f.bulkDays[key] = body
}

// Stooq serves the daily CSV download /q/d/l/?s=aapl.us&i=d&d1=&d2=
// (YYYYMMDD): no key (a request carrying one is refused, since it would
// leak a credential Stooq never asked for), "No data" for an unknown
// symbol.
func (f *Fake) Stooq() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.injected(w, r) {
			return
		}
		q := r.URL.Query()
		if r.URL.Path != "/q/d/l/" || q.Get("i") != "d" || r.Header.Get("Authorization") != "" || q.Has("apikey") {
			http.Error(w, "expected /q/d/l/?s=SYMBOL&i=d&d1=YYYYMMDD&d2=YYYYMMDD and no key", 400)
			return
		}
		from, to, err := dates(r, "d1", "d2", "20060102")
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "text/csv")
		base, us := strings.CutSuffix(q.Get("s"), ".us")
		sym := strings.ToUpper(base)
		if !us || !f.known(sym) {
			fmt.Fprint(w, "No data")
			return
		}
		bw := bufio.NewWriter(w)
		defer bw.Flush()
		bw.WriteString("Date,Open,High,Low,Close,Volume\n")
		for _, b := range f.series(sym, from, to) {
			fmt.Fprintf(bw, "%s,%s,%s,%s,%s,%s\n", b.Date, b.Open, b.High, b.Low, b.Close, b.Volume)
		}
	})
}
