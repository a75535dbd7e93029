// Package stacktest is what the tests of tdnotes and tdmarketdata share:
// skipping under -short, starting a stack for one test, and checking that
// Terminate leaves nothing of it behind.
package stacktest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	dockernetwork "github.com/docker/docker/api/types/network"
	"github.com/testcontainers/testcontainers-go"

	"github.com/tickerdesk/tickerdesk/testcontainers/internal/stack"
)

// Main runs the tests of package pkg, or, under -short, none of them:
// every test of a stack needs a Docker engine and the Tickerdesk images.
// Call it from TestMain, so the package's Examples are skipped too.
func Main(m *testing.M, pkg string) {
	flag.Parse()
	if testing.Short() {
		fmt.Printf("%s: needs Docker and the images; skipped under -short\n", pkg)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Run starts a stack with run for t, cleaned up when t ends, and logs how
// long the start took (measured, never asserted) as name's.
func Run[C testcontainers.Container](t *testing.T, name string, run func(context.Context, ...testcontainers.ContainerCustomizer) (C, error), opts ...testcontainers.ContainerCustomizer) C {
	t.Helper()
	start := time.Now()
	ctr, err := run(t.Context(), opts...)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s took %s", name, time.Since(start).Round(time.Millisecond))
	return ctr
}

// AssertTerminateRemovesEverything checks the cleanup that matters with
// Ryuk off: the stack behind ctr holds containers containers and a
// network; after ctr's Terminate none of them is left, and a second
// Terminate (CleanupContainer's) is harmless.
func AssertTerminateRemovesEverything(t *testing.T, ctr *stack.Container, containers int) {
	t.Helper()
	ctx := t.Context()
	ids, networkID := stack.Of(ctr).IDs()
	if len(ids) != containers || networkID == "" {
		t.Fatalf("stack holds containers %v and network %q before Terminate, want %d containers and a network", ids, networkID, containers)
	}
	if err := ctr.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ctr.Terminate(ctx); err != nil {
		t.Errorf("second Terminate: %v", err)
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
