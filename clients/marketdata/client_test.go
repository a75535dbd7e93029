package marketdataclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/internal/clienttest"
)

const testKey = "tdm_secretkey123"

func writeError(w http.ResponseWriter, status int, code, message string, context map[string]any) {
	if context == nil {
		context = map[string]any{}
	}
	clienttest.WriteJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": message, "context": context}})
}

// record is an EOD record as marketdata-svc encodes it; day counts back
// from 2008-10-14.
func record(symbol string, day int) map[string]any {
	d := time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -day)
	r := map[string]any{
		"open": 1.5, "high": 2.25, "low": 1.0, "close": 2.0, "volume": 1000.0,
		"adj_high": 2.25, "adj_low": 1.0, "adj_close": 2.0, "adj_open": 1.5, "adj_volume": 1000.0,
		"split_factor": 1.0, "dividend": 0.0, "name": symbol + " Inc", "symbol": symbol, "exchange_code": "NASDAQ",
		"exchange": "XNAS", "asset_type": "Stock", "price_currency": "usd", "date": d.Format("2006-01-02T15:04:05-0700"),
	}
	if strings.HasSuffix(symbol, ".INDX") {
		r["adj_high"], r["adj_low"], r["adj_open"], r["adj_volume"] = nil, nil, nil, nil
	}
	return r
}

func newTestClient(t *testing.T, h http.HandlerFunc, opts ...Option) (*Client, *clienttest.Server) {
	t.Helper()
	srv := clienttest.NewServer(t, h)
	test := []Option{WithAccessKey(testKey), WithHTTPClient(srv.Client()), func(o *options) { o.Sleep = srv.Sleep }}
	c, err := New(srv.URL, append(test, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// pagedServer serves total records of GOOG and GSPC.INDX, alternating,
// with marketstack's pagination.
func pagedServer(total int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/v1/eod" || q.Get("access_key") != testKey {
			writeError(w, http.StatusUnauthorized, "invalid_access_key", "wrong path or key", nil)
			return
		}
		limit, err := strconv.Atoi(q.Get("limit"))
		if err != nil {
			limit = 100
		}
		offset, _ := strconv.Atoi(q.Get("offset"))
		data := []map[string]any{}
		for i := offset; i < min(offset+limit, total); i++ {
			data = append(data, record([]string{"GOOG", "GSPC.INDX"}[i%2], i/2))
		}
		clienttest.WriteJSON(w, http.StatusOK, map[string]any{
			"pagination": map[string]any{"limit": limit, "offset": offset, "count": len(data), "total": total},
			"data":       data,
		})
	}
}

func TestEODPagesByOffset(t *testing.T) {
	for _, tc := range []struct {
		total, limit int
		want         []string // offsets requested
	}{
		{11, 4, []string{"0", "4", "8"}},
		{8, 4, []string{"0", "4"}},
		{0, 4, []string{"0"}},
		{150, 0, []string{"0", "100"}},
	} {
		t.Run(fmt.Sprintf("%d by %d", tc.total, tc.limit), func(t *testing.T) {
			c, srv := newTestClient(t, pagedServer(tc.total))
			got := clienttest.Collect(t, c.EOD(context.Background(), EODParams{Symbols: []string{"GOOG", "GSPC.INDX"}, DateTo: "2008-10-14", Sort: "DESC", Limit: tc.limit}))
			if len(got) != tc.total {
				t.Fatalf("got %d records, want %d", len(got), tc.total)
			}
			for _, r := range srv.Requests() {
				if !strings.Contains(r.Query, "symbols=GOOG%2CGSPC.INDX") || !strings.Contains(r.Query, "date_to=2008-10-14") || !strings.Contains(r.Query, "sort=DESC") {
					t.Fatalf("query %q lacks the parameters", r.Query)
				}
			}
			if offsets := srv.Param("offset"); !slices.Equal(offsets, tc.want) {
				t.Fatalf("offsets requested %v, want %v", offsets, tc.want)
			}
			for i, r := range got {
				wantSym := []string{"GOOG", "GSPC.INDX"}[i%2]
				wantDate := time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -i/2)
				if r.Symbol != wantSym || !r.Date.Equal(wantDate) || r.Close != 2.0 || r.High != 2.25 || r.Exchange != "XNAS" {
					t.Fatalf("record %d = %+v", i, r)
				}
				if isIndex := wantSym == "GSPC.INDX"; (r.AdjHigh == nil) != isIndex || (r.AdjOpen == nil) != isIndex {
					t.Fatalf("record %d (%s): adjusted values %v %v", i, wantSym, r.AdjHigh, r.AdjOpen)
				}
			}
		})
	}
}

func TestEODStopsWhenTheLoopBreaks(t *testing.T) {
	c, srv := newTestClient(t, pagedServer(1000))
	clienttest.Take(t, c.EOD(context.Background(), EODParams{Symbols: []string{"GOOG"}, Limit: 10}), 15)
	if got := len(srv.Requests()); got != 2 {
		t.Fatalf("%d requests for 15 records of pages of 10, want 2", got)
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			paged := pagedServer(3)
			var srv *clienttest.Server
			c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				if calls := len(srv.Requests()); calls <= 2 {
					w.Header().Set("Retry-After", strconv.Itoa(calls*2))
					writeError(w, status, "rate_limit_reached", "slow down", nil)
					return
				}
				paged(w, r)
			})
			got := clienttest.Collect(t, c.EOD(context.Background(), EODParams{Symbols: []string{"GOOG"}}))
			if calls := len(srv.Requests()); len(got) != 3 || calls != 3 {
				t.Fatalf("%d records after %d calls, want 3 after 3", len(got), calls)
			}
			if want := []time.Duration{2 * time.Second, 4 * time.Second}; !slices.Equal(srv.Waits(), want) {
				t.Fatalf("waited %v, want %v", srv.Waits(), want)
			}
		})
	}
}

func TestRetryGivesUpOnALongRetryAfter(t *testing.T) {
	calls := 0
	c, srv := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Retry-After", "86400")
		writeError(w, http.StatusTooManyRequests, "usage_limit_reached", "monthly quota spent", nil)
	})
	err := firstError(c.EOD(context.Background(), EODParams{Symbols: []string{"GOOG"}}))
	var e *Error
	if !errors.As(err, &e) || e.Status != 429 || e.Code != "usage_limit_reached" {
		t.Fatalf("err = %v", err)
	}
	if calls != 1 || len(srv.Waits()) != 0 {
		t.Fatalf("%d calls, waits %v: a day's Retry-After was waited for", calls, srv.Waits())
	}
}

func firstError[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestErrorsCarryTheMarketstackCode(t *testing.T) {
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusUnprocessableEntity, "validation_error", "Request failed with validation error",
			map[string]any{"date_from": []map[string]string{{"key": "invalid_date", "message": "not a date"}}})
	})
	err := firstError(c.EOD(context.Background(), EODParams{Symbols: []string{"GOOG"}, DateFrom: "yesterday"}))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err %T %v is not an *Error", err, err)
	}
	if e.Status != 422 || e.Code != "validation_error" || e.Message != "Request failed with validation error" ||
		len(e.Context["date_from"]) != 1 || e.Context["date_from"][0] != (ContextEntry{Key: "invalid_date", Message: "not a date"}) {
		t.Fatalf("error %+v", e)
	}
	if got := err.Error(); got != "marketdata: 422 validation_error: Request failed with validation error" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestAccessKeyNeverInAnError(t *testing.T) {
	t.Run("echoed by the server", func(t *testing.T) {
		c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusUnauthorized, "invalid_access_key", "the key "+r.URL.Query().Get("access_key")+" is not valid", nil)
		})
		err := firstError(c.EOD(context.Background(), EODParams{Symbols: []string{"GOOG"}}))
		var e *Error
		if !errors.As(err, &e) || e.Code != "invalid_access_key" {
			t.Fatalf("err = %v", err)
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(e.Message, testKey) {
			t.Fatalf("error quotes the key: %v", err)
		}
	})
	t.Run("transport error", func(t *testing.T) {
		c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			// Drop the connection without an answer.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}, WithRetries(0))
		err := firstError(c.EOD(context.Background(), EODParams{Symbols: []string{"GOOG"}}))
		if err == nil {
			t.Fatal("no error from a dropped connection")
		}
		if strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "access_key="+redacted) {
			t.Fatalf("error %q quotes the key or lost the redacted URL", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, WithRetries(0))
		defer close(release)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := firstError(c.EOD(ctx, EODParams{Symbols: []string{"GOOG"}}))
		if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), testKey) {
			t.Fatalf("err = %v, want context.Canceled without the key", err)
		}
	})
}
