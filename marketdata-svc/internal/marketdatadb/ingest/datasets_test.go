package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// TestApplyDatasets: a dataset load bumps the data version once when it
// changes rows, a re-import changes nothing, a changed value is an
// update, and a load that fails applies none of its rows.
func TestApplyDatasets(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	day := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	target := 200.0
	load := ingest.DatasetLoad{
		Commodities: []marketdata.CommodityPrice{{Name: "gold", Unit: "USD/t.oz", Date: day, Price: 2650}, {Name: "gold", Unit: "USD/t.oz", Date: day.AddDate(0, 0, 1), Price: 2660}},
		Ratings:     []marketdata.Rating{{Symbol: "GOOG", AnalystName: "A", AnalystFirm: "F", Date: day, PriceTarget: &target, Rated: "buy"}},
	}
	first, err := s.Ingest.ApplyDatasets(ctx, load)
	if err != nil || first.Changed != 3 || first.Version == 0 {
		t.Fatalf("first load: %+v %v, want 3 rows changed and a version", first, err)
	}
	again, err := s.Ingest.ApplyDatasets(ctx, load)
	if err != nil || again.Changed != 0 || again.Version != 0 {
		t.Fatalf("re-import: %+v %v, want no change", again, err)
	}
	load.Commodities[1].Price = 2661
	upd, err := s.Ingest.ApplyDatasets(ctx, load)
	if err != nil || upd.Changed != 1 || upd.Version <= first.Version {
		t.Fatalf("changed price: %+v %v, want 1 row and a newer version", upd, err)
	}
	// A bad rating (the store's check refuses it) fails the whole load:
	// the new commodity price goes too.
	bad := ingest.DatasetLoad{
		Commodities: []marketdata.CommodityPrice{{Name: "silver", Date: day, Price: 30}},
		Ratings:     []marketdata.Rating{{Symbol: "GOOG", AnalystName: "B", AnalystFirm: "F", Date: day, Rated: "strong buy"}},
	}
	if _, err := s.Ingest.ApplyDatasets(ctx, bad); err == nil {
		t.Fatal("a load with a bad rating succeeded")
	}
	loaded, err := s.Reads.LoadedDatasets(ctx)
	if err != nil || !loaded[marketdata.DatasetCommodities] || !loaded[marketdata.DatasetRatings] {
		t.Fatalf("loaded datasets: %v %v", loaded, err)
	}
	if _, err := s.Reads.Commodity(ctx, "silver"); err == nil {
		t.Error("silver of the failed load was stored")
	}
	gold, err := s.Reads.Commodity(ctx, "gold")
	if err != nil || len(gold.Prices) != 2 || gold.Prices[1].Price != 2661 || gold.Unit != "USD/t.oz" {
		t.Errorf("gold: %+v %v", gold, err)
	}
}

// TestApplyETFsReplacesAFilingsHoldings: a filing imported again with
// fewer holdings keeps exactly the new ones; the same file twice changes
// nothing.
func TestApplyETFsReplacesAFilingsHoldings(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	end := time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)
	v := 10.0
	filing := func(names ...string) ingest.DatasetLoad {
		f := marketdata.ETFFilingHoldings{Filing: marketdata.ETFFiling{Ticker: "SMPL", ReportDate: end, FundName: "Trust"}}
		for _, n := range names {
			f.Holdings = append(f.Holdings, marketdata.ETFSecurity{Name: n, ValueUSD: &v})
		}
		return ingest.DatasetLoad{ETFs: []marketdata.ETFFilingHoldings{f}}
	}
	if res, err := s.Ingest.ApplyDatasets(ctx, filing("A", "B", "C")); err != nil || res.Changed != 4 {
		t.Fatalf("first: %+v %v, want the filing and 3 holdings", res, err)
	}
	if res, err := s.Ingest.ApplyDatasets(ctx, filing("A", "B", "C")); err != nil || res.Version != 0 {
		t.Fatalf("again: %+v %v, want no change", res, err)
	}
	if res, err := s.Ingest.ApplyDatasets(ctx, filing("B", "A")); err != nil || res.Changed != 3 {
		t.Fatalf("replaced: %+v %v, want 2 holdings updated and 1 removed", res, err)
	}
	got, err := s.Reads.ETFHoldings(ctx, marketdata.ETFQuery{Ticker: "SMPL"})
	if err != nil || len(got.Holdings) != 2 || got.Holdings[0].Name != "B" || got.Holdings[1].Name != "A" || *got.Holdings[0].ValueUSD != 10 {
		t.Errorf("holdings: %+v %v", got, err)
	}
}

// TestApplyEDGARKeepsTheOtherDocument: a company's submissions and facts
// are loaded apart; loading one keeps the other.
func TestApplyEDGARKeepsTheOtherDocument(t *testing.T) {
	s := testenv.Store(t)
	ctx := context.Background()
	sub := marketdata.EDGARCompany{CIK: "0000000042", Name: "Example", Submissions: []byte(`{"cik":"42","name":"Example","filings":{}}`)}
	facts := marketdata.EDGARCompany{CIK: "0000000042", Name: "Example", Facts: []byte(`{"cik":42,"facts":{}}`)}
	for _, c := range []marketdata.EDGARCompany{sub, facts} {
		if res, err := s.Ingest.ApplyDatasets(ctx, ingest.DatasetLoad{EDGAR: []marketdata.EDGARCompany{c}}); err != nil || res.Changed != 1 {
			t.Fatalf("load: %+v %v", res, err)
		}
	}
	if res, err := s.Ingest.ApplyDatasets(ctx, ingest.DatasetLoad{EDGAR: []marketdata.EDGARCompany{sub}}); err != nil || res.Version != 0 {
		t.Fatalf("reload: %+v %v, want no change", res, err)
	}
	got, err := s.Reads.EDGARCompany(ctx, "0000000042")
	if err != nil || got.Submissions == nil || got.Facts == nil {
		t.Errorf("company: %+v %v, want both documents", got, err)
	}
}
