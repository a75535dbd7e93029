package httpedge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

type ctxKey struct{}

// newDeadline is what Timeout gives a handler: a deadlineCtx over parent.
func newDeadline(parent context.Context, d time.Duration) *deadlineCtx {
	return &deadlineCtx{Context: parent, deadline: time.Now().Add(d), ended: endedCtx()}
}

// waitDone fails the test when ctx is not done within a generous bound: it
// checks that cancellation arrives, not how fast.
func waitDone(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the context was never done", what)
	}
}

func TestDeadlineReportedUnarmed(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	d := newDeadline(parent, time.Minute)
	if dl, ok := d.Deadline(); !ok || time.Until(dl) <= 0 {
		t.Fatalf("Deadline() = %v, %v", dl, ok)
	}
	if d.armed.Load() != nil {
		t.Fatal("Deadline armed the timer")
	}
	if got := d.Value(ctxKey{}); got != "v" {
		t.Fatalf("Value = %v, want the parent's", got)
	}
	if d.armed.Load() != nil {
		t.Fatal("Value armed the timer")
	}
}

func TestDeadlinePasses(t *testing.T) {
	d := newDeadline(context.Background(), 20*time.Millisecond)
	child, cancel := context.WithCancel(d)
	defer cancel()
	waitDone(t, child, "child")
	if !errors.Is(d.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Fatalf("errors %v, %v; want the deadline's", d.Err(), child.Err())
	}
	d.end()
	if !errors.Is(d.Err(), context.DeadlineExceeded) {
		t.Fatalf("after the end: %v, want the deadline's still", d.Err())
	}
}

func TestDeadlineFollowsTheParent(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	d := newDeadline(parent, time.Hour)
	if d.Err() != nil {
		t.Fatalf("Err before anything happened: %v", d.Err())
	}
	cancelParent()
	waitDone(t, d, "after the parent's cancel")
	if !errors.Is(d.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want canceled", d.Err())
	}
	d.end()
}

func TestDeadlineEndCancels(t *testing.T) {
	for _, armed := range []bool{false, true} {
		parent := context.WithValue(context.Background(), ctxKey{}, "v")
		d := newDeadline(parent, time.Hour)
		var child context.Context = d
		if armed {
			var cancel context.CancelFunc
			child, cancel = context.WithCancel(d)
			defer cancel()
		}
		d.end()
		waitDone(t, d, "the ended context")
		waitDone(t, child, "a child of the ended context")
		if !errors.Is(d.Err(), context.Canceled) {
			t.Errorf("armed %v: Err = %v, want canceled", armed, d.Err())
		}
		if got := d.Value(ctxKey{}); got != "v" {
			t.Errorf("armed %v: Value after the end = %v, want the parent's", armed, got)
		}
		// A context derived after the end starts canceled.
		late, cancel := context.WithCancel(d)
		waitDone(t, late, "a child made after the end")
		cancel()
	}
}

// TestDeadlineArmsOnce runs under -race in make test: concurrent first
// waits share one timer and one channel.
func TestDeadlineArmsOnce(t *testing.T) {
	d := newDeadline(context.Background(), time.Hour)
	const n = 8
	chans := make([]<-chan struct{}, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { chans[i] = d.Done() })
	}
	wg.Wait()
	for i := range chans {
		if chans[i] != chans[0] {
			t.Fatal("Done returned different channels")
		}
	}
	d.end()
	waitDone(t, d, "ended")
}

func TestTimeoutEndsWithTheRequest(t *testing.T) {
	gin.SetMode(gin.TestMode)
	var kept context.Context
	e := gin.New()
	e.GET("/", Timeout(time.Hour), func(c *gin.Context) { kept = c.Request.Context() })
	e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if kept == nil {
		t.Fatal("the handler did not run")
	}
	waitDone(t, kept, "a request's context after it was served")
}

// BenchmarkTimeout compares the request deadline as Timeout makes it with
// context.WithTimeout's, for a request that never waits on its context (a
// cache hit) and for one that does (a database call).
func BenchmarkTimeout(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := endedCtx()
	b.Run("lazy/unused", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d := &deadlineCtx{Context: parent, deadline: time.Now().Add(time.Minute), ended: ended}
			_, _ = d.Deadline()
			d.end()
		}
	})
	b.Run("lazy/waited", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d := &deadlineCtx{Context: parent, deadline: time.Now().Add(time.Minute), ended: ended}
			_ = d.Done()
			d.end()
		}
	})
	b.Run("withtimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(parent, time.Minute)
			_, _ = ctx.Deadline()
			cancel()
		}
	})
}
