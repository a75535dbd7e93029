package tdnotes

import (
	"errors"
	"net/http"
	"testing"
	"time"

	notesclient "github.com/tickerdesk/tickerdesk/clients/notes"
	"github.com/tickerdesk/tickerdesk/testcontainers/internal/stacktest"
)

func TestMain(m *testing.M) { stacktest.Main(m, "tdnotes") }

// newClient is a client of the notes-svc in ctr that sends key.
func newClient(t *testing.T, ctr *Container, key string) *notesclient.Client {
	t.Helper()
	c, err := notesclient.New(ctr.BaseURL(), notesclient.WithAPIKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNotesThroughClient(t *testing.T) {
	ctx := t.Context()
	ctr := stacktest.Run(t, "tdnotes.Run", Run)
	client := newClient(t, ctr, ctr.APIKey())
	created, err := client.Create(ctx, notesclient.NewNote{Title: "Earnings", Content: "GOOG reports on Thursday", Tags: []string{"research"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.Get(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != created.ID || got.Title != "Earnings" || got.Content != "GOOG reports on Thursday" {
		t.Errorf("Get = %+v, want the note created (%s)", got, created.ID)
	}
	var listed []string
	for n, err := range client.List(ctx, notesclient.ListParams{Tag: "research"}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, n.ID)
	}
	if len(listed) != 1 || listed[0] != created.ID {
		t.Errorf("List(tag research) = %v, want [%s]", listed, created.ID)
	}
	// The Container is cleaned up as a whole: service, PostgreSQL, network.
	stacktest.AssertTerminateRemovesEverything(t, ctr, 2)
}

func TestReadOnlyKey(t *testing.T) {
	ctx := t.Context()
	ctr := stacktest.Run(t, "tdnotes.Run", Run, WithKey("reader", []string{"notes:read"}, Limits{ExpiresIn: time.Hour}))
	client := newClient(t, ctr, ctr.APIKey())
	for _, err := range client.List(ctx, notesclient.ListParams{}) {
		if err != nil {
			t.Fatalf("List with a notes:read key: %v", err)
		}
	}
	_, err := client.Create(ctx, notesclient.NewNote{Title: "t", Content: "c"})
	var apiErr *notesclient.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Errorf("Create with a notes:read key: %v, want a 403 *notesclient.Error", err)
	}
}

// TestIssueKey issues keys through the admin API after the start: a key of
// another account sees none of the first account's notes, and a second key
// of the same account sees them.
func TestIssueKey(t *testing.T) {
	ctx := t.Context()
	ctr := stacktest.Run(t, "tdnotes.Run", Run)
	first := newClient(t, ctr, ctr.APIKey())
	created, err := first.Create(ctx, notesclient.NewNote{Title: "mine", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		account string
		found   bool
	}{{"other", false}, {"testcontainers", true}} {
		key, err := ctr.IssueKey(ctx, c.account, "notes:read")
		if err != nil {
			t.Fatalf("IssueKey(%s): %v", c.account, err)
		}
		if key == ctr.APIKey() {
			t.Fatalf("IssueKey(%s) returned the start-up key", c.account)
		}
		client := newClient(t, ctr, key)
		_, err = client.Get(ctx, created.ID)
		var apiErr *notesclient.Error
		switch {
		case c.found && err != nil:
			t.Errorf("Get with a second key of the same account: %v", err)
		case !c.found && (!errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound):
			t.Errorf("Get with a key of account %s: %v, want a 404", c.account, err)
		}
		if _, err := client.Create(ctx, notesclient.NewNote{Title: "t", Content: "c"}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
			t.Errorf("Create with the notes:read key of %s: %v, want a 403", c.account, err)
		}
	}
}
