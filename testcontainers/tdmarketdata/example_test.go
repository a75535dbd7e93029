package tdmarketdata_test

import (
	"context"
	"fmt"

	"github.com/testcontainers/testcontainers-go"

	marketdataclient "github.com/tickerdesk/tickerdesk/clients/marketdata"
	"github.com/tickerdesk/tickerdesk/testcontainers/tdmarketdata"
)

// A consumer's test: marketdata-svc with the demo data, GOOG's close on
// 2008-10-14 through the Go client. An error is printed, which fails the
// Output check, as does a missing bar; the stack is removed either way.
func ExampleRun() {
	ctx := context.Background()
	ctr, err := tdmarketdata.Run(ctx, tdmarketdata.WithDemoData())
	defer func() { _ = testcontainers.TerminateContainer(ctr) }()
	if err != nil {
		fmt.Println(err)
		return
	}
	client, _ := marketdataclient.New(ctr.BaseURL(), marketdataclient.WithAccessKey(ctr.APIKey()))
	for bar, err := range client.EOD(ctx, marketdataclient.EODParams{Symbols: []string{"GOOG"}, DateFrom: "2008-10-14", DateTo: "2008-10-14"}) {
		fmt.Println(bar.Symbol, bar.Date.Format("2006-01-02"), bar.Close, err)
	}
	// Output: GOOG 2008-10-14 362.71 <nil>
}
