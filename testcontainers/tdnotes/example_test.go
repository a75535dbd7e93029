package tdnotes_test

import (
	"context"
	"fmt"

	"github.com/testcontainers/testcontainers-go"

	notesclient "github.com/tickerdesk/tickerdesk/clients/notes"
	"github.com/tickerdesk/tickerdesk/testcontainers/tdnotes"
)

// A consumer's test: notes-svc, a note created and read back through the
// Go client. An error is printed, which fails the Output check, and the
// stack is removed either way.
func ExampleRun() {
	ctx := context.Background()
	ctr, err := tdnotes.Run(ctx)
	defer func() { _ = testcontainers.TerminateContainer(ctr) }()
	if err != nil {
		fmt.Println(err)
		return
	}
	client, _ := notesclient.New(ctr.BaseURL(), notesclient.WithAPIKey(ctr.APIKey()))
	created, err := client.Create(ctx, notesclient.NewNote{Title: "Earnings", Content: "GOOG reports on Thursday"})
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := client.Get(ctx, created.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Title, "-", got.Content)
	// Output: Earnings - GOOG reports on Thursday
}
