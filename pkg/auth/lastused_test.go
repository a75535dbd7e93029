package auth

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestLastUsedTrackerBatchesAndRetries(t *testing.T) {
	var flushed []map[string]time.Time
	fail := true
	tr := NewLastUsedTracker(func(_ context.Context, m LastUsed) error {
		if fail {
			return errors.New("db down")
		}
		flushed = append(flushed, m)
		return nil
	})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		tr.Record(Principal{KeyID: "a"}, t0.Add(time.Duration(i)*time.Millisecond))
	}
	tr.Record(Principal{KeyID: "b"}, t0)
	if err := tr.Flush(context.Background()); err == nil {
		t.Fatal("want the flush error")
	}
	if len(tr.pending()) != 2 {
		t.Fatalf("failed batch was dropped: %v", tr.pending())
	}
	fail = false
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(flushed) != 1 || len(flushed[0]) != 2 || !flushed[0]["a"].Equal(t0.Add(999*time.Millisecond)) {
		t.Fatalf("flushed %v", flushed)
	}
	if err := tr.Flush(context.Background()); err != nil || len(flushed) != 1 {
		t.Fatal("empty flush must not call the flusher")
	}
}

func TestLastUsedTrackerFlushesOnStop(t *testing.T) {
	got := make(chan map[string]time.Time, 1)
	tr := NewLastUsedTracker(func(_ context.Context, m LastUsed) error { got <- m; return nil })
	tr.Record(Principal{KeyID: "k"}, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tr.Run(ctx, time.Hour, nil); close(done) }()
	cancel()
	<-done
	select {
	case m := <-got:
		if _, ok := m["k"]; !ok {
			t.Fatalf("final flush %v lacks the key", m)
		}
	default:
		t.Fatal("Run did not flush on stop")
	}
}

// TestLastUsedColumns: the columns are parallel, in UTC, and leave out
// exactly the ids keep refuses.
func TestLastUsedColumns(t *testing.T) {
	est := time.FixedZone("EST", -5*3600)
	u := LastUsed{"a": time.Date(2026, 1, 2, 3, 4, 5, 0, est), "bad": time.Now(), "c": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ids, times := u.Columns(func(id string) bool { return id != "bad" })
	if len(ids) != 2 || len(times) != 2 {
		t.Fatalf("columns %v %v, want two rows", ids, times)
	}
	for i, id := range ids {
		if times[i].Location() != time.UTC || !times[i].Equal(u[id]) {
			t.Errorf("row %s: time %v, want %v in UTC", id, times[i], u[id])
		}
	}
	if ids, _ := u.Columns(nil); len(ids) != 3 {
		t.Errorf("Columns(nil) kept %d ids, want all 3", len(ids))
	}
}
