package notes

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestListLimiter(t *testing.T) {
	l := NewListLimiter(1, 2, 0)
	ctx := context.Background()
	a1, err := l.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "a"); !errors.Is(err, ErrTooManyListings) {
		t.Fatalf("second listing of a: %v", err)
	}
	b1, err := l.Acquire(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "c"); !errors.Is(err, ErrListingsBusy) {
		t.Fatalf("listing over the process bound: %v", err)
	}
	// A release called twice gives back one slot, and the busy refusal
	// did not count against c's own bound.
	b1()
	b1()
	if l.InProgress() != 1 {
		t.Fatalf("%d in progress after one release, want 1", l.InProgress())
	}
	c1, err := l.Acquire(ctx, "c")
	if err != nil {
		t.Fatalf("c after a slot came free: %v", err)
	}
	if _, err := l.Acquire(ctx, "b"); !errors.Is(err, ErrListingsBusy) {
		t.Fatalf("b with the process full: %v", err)
	}
	if acct, busy := l.Refused(); acct != 1 || busy != 2 {
		t.Errorf("refused %d by account, %d busy; want 1 and 2", acct, busy)
	}
	a1()
	c1()
	if l.InProgress() != 0 {
		t.Errorf("%d in progress after every release", l.InProgress())
	}
}

func TestListLimiterWait(t *testing.T) {
	l := NewListLimiter(1, 1, time.Hour)
	held, err := l.Acquire(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	// A waiting listing gives up with its request.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Acquire(ctx, "b"); !errors.Is(err, ErrListingsBusy) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	// And gets the slot when one comes free.
	got := make(chan error, 1)
	go func() {
		release, err := l.Acquire(context.Background(), "b")
		if err == nil {
			release()
		}
		got <- err
	}()
	held()
	if err := <-got; err != nil {
		t.Fatalf("waiting listing: %v", err)
	}
	if l.InProgress() != 0 {
		t.Errorf("%d in progress", l.InProgress())
	}
}
