package tdnotes

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	dockernetwork "github.com/docker/docker/api/types/network"
	"github.com/testcontainers/testcontainers-go"

	notesclient "github.com/tickerdesk/tickerdesk/clients/notes"
)

// TestMain skips the whole package, the Example included, under -short:
// every test here needs a Docker engine and the Tickerdesk images.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("tdnotes: needs Docker and the images; skipped under -short")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestNotesThroughClient(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	ctr, err := Run(ctx)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tdnotes.Run took %s", time.Since(start).Round(time.Millisecond))
	client, err := notesclient.New(ctr.BaseURL(), notesclient.WithAPIKey(ctr.APIKey()))
	if err != nil {
		t.Fatal(err)
	}
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
	ids := []string{ctr.stack.Service.GetContainerID(), ctr.stack.Postgres.GetContainerID()}
	networkID := ctr.stack.Network.ID

	// The Container is cleaned up as a whole: service, PostgreSQL, network.
	if err := ctr.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for _, id := range ids {
		if _, err := cli.ContainerInspect(ctx, id); !errdefs.IsNotFound(err) {
			t.Errorf("container %.12s after Terminate: inspect error %v, want not found", id, err)
		}
	}
	if _, err := cli.NetworkInspect(ctx, networkID, dockernetwork.InspectOptions{}); !errdefs.IsNotFound(err) {
		t.Errorf("network %.12s after Terminate: inspect error %v, want not found", networkID, err)
	}
}

func TestReadOnlyKey(t *testing.T) {
	ctx := t.Context()
	ctr, err := Run(ctx, WithKey("reader", []string{"notes:read"}, Limits{ExpiresIn: time.Hour}))
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	client, err := notesclient.New(ctr.BaseURL(), notesclient.WithAPIKey(ctr.APIKey()))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range client.List(ctx, notesclient.ListParams{}) {
		if err != nil {
			t.Fatalf("List with a notes:read key: %v", err)
		}
	}
	_, err = client.Create(ctx, notesclient.NewNote{Title: "t", Content: "c"})
	var apiErr *notesclient.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Errorf("Create with a notes:read key: %v, want a 403 *notesclient.Error", err)
	}
}
