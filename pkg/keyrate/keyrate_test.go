package keyrate

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// clock is a fake time source tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLimiterBurstThenPace(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	l := NewLimiter(5, c.now)
	// A second's worth at once, each admission one fewer remaining.
	for want := 4; want >= 0; want-- {
		r := l.Allow("k")
		if !r.Allowed || r.Remaining != want {
			t.Fatalf("burst: %+v, want allowed with %d remaining", r, want)
		}
		if wantReset := time.Duration(5-want) * 200 * time.Millisecond; r.ResetAfter != wantReset {
			t.Fatalf("burst: reset after %v, want %v", r.ResetAfter, wantReset)
		}
	}
	r := l.Allow("k")
	if r.Allowed || r.RetryAfter != 200*time.Millisecond || r.ResetAfter != time.Second || r.Remaining != 0 {
		t.Fatalf("over the burst: %+v, want refused, retry after 200ms, reset after 1s", r)
	}
	// The refusal cost nothing: one emission interval later, exactly one
	// more is admitted.
	c.t = c.t.Add(200 * time.Millisecond)
	if r := l.Allow("k"); !r.Allowed || r.Remaining != 0 {
		t.Fatalf("after one interval: %+v, want allowed with 0 remaining", r)
	}
	if r := l.Allow("k"); r.Allowed {
		t.Fatalf("second request in the interval: %+v, want refused", r)
	}
	// Another key has its own burst.
	if r := l.Allow("other"); !r.Allowed || r.Remaining != 4 {
		t.Fatalf("other key: %+v, want allowed with 4 remaining", r)
	}
	// A client that paces itself at the rate is never refused.
	c.t = c.t.Add(time.Second)
	for i := range 50 {
		if r := l.Allow("k"); !r.Allowed {
			t.Fatalf("paced request %d refused: %+v", i, r)
		}
		c.t = c.t.Add(200 * time.Millisecond)
	}
}

func TestLimiterRateAtLeastOne(t *testing.T) {
	l := NewLimiter(0, nil)
	if l.Rate() != 1 {
		t.Fatalf("rate = %d, want 1", l.Rate())
	}
	if r := l.Allow("k"); !r.Allowed {
		t.Fatalf("first request refused: %+v", r)
	}
	if r := l.Allow("k"); r.Allowed {
		t.Fatalf("second request at once allowed: %+v", r)
	}
}

func TestTablePrunesIdleKeys(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var tb Table
	for i := range pruneAt - 1 {
		tb.Allow(now, fmt.Sprint(i), 10)
	}
	if tb.Prune(now.Add(time.Hour)) || len(tb.tat) != pruneAt-1 {
		t.Fatalf("pruned below %d keys: %d left", pruneAt, len(tb.tat))
	}
	tb.Allow(now.Add(time.Hour), "active", 10)
	if !tb.Prune(now.Add(time.Hour)) || len(tb.tat) != 1 {
		t.Fatalf("after pruning at %d keys: %d left, want only the active one", pruneAt, len(tb.tat))
	}
	// The active key kept its state.
	for range 9 {
		tb.Allow(now.Add(time.Hour), "active", 10)
	}
	if r := tb.Allow(now.Add(time.Hour), "active", 10); r.Allowed {
		t.Fatalf("11th request in the instant allowed after pruning: %+v", r)
	}
}

func TestHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    State
		want http.Header
	}{
		{"no limits", State{}, http.Header{}},
		{"rate", State{Rate: 50, Remaining: 48, ResetAfter: 40 * time.Millisecond}, http.Header{
			"X-Ratelimit-Limit": {"50"}, "X-Ratelimit-Remaining": {"48"}, "X-Ratelimit-Reset": {"1"},
			"Ratelimit-Policy": {`"second";q=50;w=1`}, "Ratelimit": {`"second";r=48;t=1`},
		}},
		{"rate refused", State{Rate: 5, ResetAfter: time.Second, Refused: true, RetryAfter: 200 * time.Millisecond}, http.Header{
			"X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1"},
			"Ratelimit-Policy": {`"second";q=5;w=1`}, "Ratelimit": {`"second";r=0;t=1`}, "Retry-After": {"1"},
		}},
		{"rate and month", State{Rate: 10, Remaining: 9, ResetAfter: 100 * time.Millisecond,
			Quota: 1000, Used: 10, QuotaResetAfter: 86399500 * time.Millisecond, QuotaWindow: 31 * 24 * time.Hour}, http.Header{
			"X-Ratelimit-Limit": {"10"}, "X-Ratelimit-Remaining": {"9"}, "X-Ratelimit-Reset": {"1"},
			"Ratelimit-Policy": {`"second";q=10;w=1, "month";q=1000;w=2678400`}, "Ratelimit": {`"second";r=9;t=1, "month";r=990;t=86400`},
		}},
		{"month refused", State{Quota: 100, Used: 100, QuotaResetAfter: 90 * time.Second, QuotaWindow: 30 * 24 * time.Hour,
			Refused: true, RetryAfter: 90 * time.Second}, http.Header{
			"Ratelimit-Policy": {`"month";q=100;w=2592000`}, "Ratelimit": {`"month";r=0;t=90`}, "Retry-After": {"90"},
		}},
	} {
		var w Headers
		// Twice: the second answer reuses the kept policy values.
		for range 2 {
			h := http.Header{}
			w.Write(h, tc.s)
			if !reflect.DeepEqual(h, tc.want) {
				t.Errorf("%s: headers %v, want %v", tc.name, h, tc.want)
			}
		}
	}
}

func TestHeadersFollowChangedLimits(t *testing.T) {
	var w Headers
	for _, rate := range []int{10, 20, 10} {
		h := http.Header{}
		w.Write(h, State{Rate: rate, Remaining: 1})
		if got, want := h.Get("RateLimit-Policy"), fmt.Sprintf(`"second";q=%d;w=1`, rate); got != want {
			t.Fatalf("policy %q, want %q", got, want)
		}
	}
}

func BenchmarkLimiterAllow(b *testing.B) {
	l := NewLimiter(1_000_000_000, nil)
	b.ReportAllocs()
	for b.Loop() {
		l.Allow("key")
	}
}

// TestTableFollowsGCRA drives a Table through requests at uneven times,
// some peeked first, and holds every answer to the GCRA written out
// step by step: the TAT after an allowed request is one emission
// interval later, a request is refused while TAT+emission-burst is after
// now, and Peek answers as Allow would before counting the request.
func TestTableFollowsGCRA(t *testing.T) {
	const rate = 4
	emission := time.Second / rate
	burst := emission * rate
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var tab Table
	var tat time.Time // the reference TAT of the one key
	steps := []time.Duration{0, 0, 0, 0, 0, 0, 10 * time.Millisecond, 240 * time.Millisecond, 1, 300 * time.Millisecond, 2 * time.Second, 0, 0, 90 * time.Millisecond}
	for i, step := range steps {
		now = now.Add(step)
		from := tat
		if from.Before(now) {
			from = now
		}
		var want Result
		if allowAt := from.Add(emission - burst); now.Before(allowAt) {
			want = Result{RetryAfter: allowAt.Sub(now), ResetAfter: from.Sub(now)}
		} else {
			want = Result{Allowed: true, Remaining: int((burst - from.Sub(now)) / emission), ResetAfter: from.Sub(now)}
		}
		if got := tab.Peek(now, "k", rate); got != want {
			t.Fatalf("step %d: Peek = %+v, want %+v", i, got, want)
		}
		if want.Allowed {
			tat = from.Add(emission)
			want = Result{Allowed: true, Remaining: int((burst - tat.Sub(now)) / emission), ResetAfter: tat.Sub(now)}
		}
		if got := tab.Allow(now, "k", rate); got != want {
			t.Fatalf("step %d: Allow = %+v, want %+v", i, got, want)
		}
	}
}
