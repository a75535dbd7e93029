package tdmarketdata

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"

	marketdataclient "github.com/tickerdesk/tickerdesk/clients/marketdata"
	"github.com/tickerdesk/tickerdesk/testcontainers/internal/stacktest"
)

func TestMain(m *testing.M) { stacktest.Main(m, "tdmarketdata") }

// run starts a stack for t, cleaned up when t ends.
func run(t *testing.T, opts ...testcontainers.ContainerCustomizer) *Container {
	t.Helper()
	return stacktest.Run(t, "tdmarketdata.Run", Run, opts...)
}

func TestDemoDataThroughClient(t *testing.T) {
	ctr := run(t, WithDemoData())
	ctx := t.Context()
	client, err := marketdataclient.New(ctr.BaseURL(), marketdataclient.WithAccessKey(ctr.APIKey()))
	if err != nil {
		t.Fatal(err)
	}
	var got []marketdataclient.EOD
	for bar, err := range client.EOD(ctx, marketdataclient.EODParams{Symbols: []string{"GOOG"}, DateFrom: "2008-10-13", DateTo: "2008-10-14"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, bar)
	}
	if len(got) != 2 {
		t.Fatalf("GOOG 2008-10-13..14: %d bars, want 2: %+v", len(got), got)
	}
	byDate := map[string]float64{}
	for _, b := range got {
		if b.Symbol != "GOOG" {
			t.Errorf("bar of %q, want GOOG", b.Symbol)
		}
		byDate[b.Date.Format(time.DateOnly)] = b.Close
	}
	if byDate["2008-10-14"] != 362.71 {
		t.Errorf("GOOG close on 2008-10-14 = %v, want 362.71 (bars %v)", byDate["2008-10-14"], byDate)
	}

	// The key is the one created at start: another is refused.
	bad, _ := marketdataclient.New(ctr.BaseURL(), marketdataclient.WithAccessKey(ctr.APIKey()+"x"))
	for _, err := range bad.EOD(ctx, marketdataclient.EODParams{Symbols: []string{"GOOG"}}) {
		var apiErr *marketdataclient.Error
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
			t.Errorf("EOD with a wrong key: %v, want a 401 *marketdataclient.Error", err)
		}
		break
	}
	if cache := readyz(t, ctr)["cache"]; cache != "ok" {
		t.Errorf("/readyz cache = %q, want ok (Redis)", cache)
	}
	stacktest.AssertTerminateRemovesEverything(t, ctr, 3)
}

func TestImportWithoutRedisAndKeyLimits(t *testing.T) {
	ctr := run(t, WithoutRedis(), WithImport("testdata/tdtc-prices.csv"),
		WithKey("team-a", []string{"eod"}, Limits{MonthlyQuota: 3}))
	ctx := t.Context()
	client, err := marketdataclient.New(ctr.BaseURL(), marketdataclient.WithAccessKey(ctr.APIKey()), marketdataclient.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	var closes []float64
	for bar, err := range client.EOD(ctx, marketdataclient.EODParams{Symbols: []string{"TDTC"}, Sort: "ASC"}) {
		if err != nil {
			t.Fatal(err)
		}
		closes = append(closes, bar.Close)
	}
	sort.Float64s(closes)
	if want := []float64{11.25, 11.80}; !slices.Equal(closes, want) {
		t.Errorf("imported TDTC closes = %v, want %v", closes, want)
	}
	if cache := readyz(t, ctr)["cache"]; cache != "in-process" {
		t.Errorf("/readyz cache = %q, want in-process (no Redis)", cache)
	}
	// Scopes: the key has eod only. Raw HTTP, as the client has no tickers call.
	if got := status(t, ctr.BaseURL()+"/v1/tickers?access_key="+ctr.APIKey()); got != http.StatusForbidden {
		t.Errorf("/v1/tickers with an eod-only key: %d, want 403", got)
	}
	// Quota: 3 a month, one spent above; the fourth request is refused.
	eod := ctr.BaseURL() + "/v1/eod?symbols=TDTC&access_key=" + ctr.APIKey()
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		if got := status(t, eod); got != want {
			t.Errorf("request %d of the month: %d, want %d", i+2, got, want)
		}
	}
}

func readyz(t *testing.T, ctr *Container) map[string]string {
	t.Helper()
	res, err := http.Get(ctr.BaseURL() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]string
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	return body
}

func status(t *testing.T, url string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.WithoutCancel(t.Context()), http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}
