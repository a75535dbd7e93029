package tdmarketdata_test

import (
	"iter"
	"testing"

	"github.com/testcontainers/testcontainers-go"

	marketdataclient "github.com/tickerdesk/tickerdesk/clients/marketdata"
	"github.com/tickerdesk/tickerdesk/testcontainers/tdmarketdata"
)

// TestGOOGClose is the consumer's test the root README shows under "Use
// it", word for word, so that the README cannot drift from what works.
func TestGOOGClose(t *testing.T) {
	ctr, err := tdmarketdata.Run(t.Context(), tdmarketdata.WithDemoData())
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	client, _ := marketdataclient.New(ctr.BaseURL(), marketdataclient.WithAccessKey(ctr.APIKey()))
	next, stop := iter.Pull2(client.EOD(t.Context(), marketdataclient.EODParams{Symbols: []string{"GOOG"}, DateFrom: "2008-10-14", DateTo: "2008-10-14"}))
	defer stop()
	if bar, err, ok := next(); !ok || err != nil || bar.Close != 362.71 {
		t.Fatalf("GOOG on 2008-10-14: %+v, %v, %v; want close 362.71", bar, err, ok)
	}
}
