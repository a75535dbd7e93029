package marketdataclient

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/clients/internal/clienttest"
)

// TestV2IntradayPagesAndErrors: the /v2 client pages by offset like the
// /v1 one, and a refusal is an *Error with v2's code and no access key.
func TestV2IntradayPagesAndErrors(t *testing.T) {
	srv := clienttest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("symbols") == "SPENT" {
			writeError(w, http.StatusTooManyRequests, "too_many_requests", "quota of "+testKey+" spent", nil)
			return
		}
		if r.URL.Path != "/v2/intraday" || q.Get("access_key") != testKey {
			writeError(w, http.StatusNotFound, "invalid_api_function", "wrong path or key", nil)
			return
		}
		off, _ := strconv.Atoi(q.Get("offset"))
		const total = 5
		var data []map[string]any
		for i := off; i < min(off+2, total); i++ {
			data = append(data, map[string]any{"open": 1.0, "high": 1.0, "low": 1.0, "close": float64(i), "volume": 1.0, "last": float64(i),
				"symbol": "GOOG", "exchange": "XNAS", "date": fmt.Sprintf("2008-10-14T13:3%d:00+0000", 4-i)})
		}
		clienttest.WriteJSON(w, http.StatusOK, map[string]any{"pagination": map[string]any{"limit": 2, "offset": off, "count": len(data), "total": total}, "data": data})
	})
	c, err := NewV2(srv.URL, WithAccessKey(testKey), WithHTTPClient(srv.Client()), WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	var closes []float64
	for b, err := range c.Intraday(t.Context(), IntradayParams{Symbols: []string{"GOOG"}, Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		closes = append(closes, b.Close)
	}
	if fmt.Sprint(closes) != "[0 1 2 3 4]" {
		t.Errorf("closes %v, want five bars over three pages", closes)
	}
	err = firstError(c.Intraday(t.Context(), IntradayParams{Symbols: []string{"SPENT"}}))
	var me *Error
	if !errors.As(err, &me) || me.Status != 429 || me.Code != "too_many_requests" || strings.Contains(err.Error(), testKey) {
		t.Errorf("spent quota: %v", err)
	}
}
