// Package load drives a bounded load: a fixed request rate for a fixed
// time, stopping by itself, with the outcome of every request recorded.
package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Plan is one bounded load.
type Plan struct {
	// Rate is requests per second, Duration how long requests are started.
	Rate     int
	Duration time.Duration
	// Build makes the i-th request (i counts from 0).
	Build func(i int) (*http.Request, error)
	// Client sends them; its Timeout bounds every request, so the load
	// ends at most Duration + Timeout after it starts.
	Client *http.Client
}

// Result is the outcome of one request.
type Result struct {
	Seq    int
	Start  time.Time
	End    time.Time
	Status int // 0 when no response arrived
	Err    error
	Body   []byte // first 2 KiB
	Header http.Header
}

// Duration is how long the request took.
func (r Result) Duration() time.Duration { return r.End.Sub(r.Start) }

// Refused reports a connection that was never accepted: nothing listened.
func (r Result) Refused() bool { return r.Err != nil && errors.Is(r.Err, syscall.ECONNREFUSED) }

// TimedOut reports a request the client gave up on.
func (r Result) TimedOut() bool {
	var ne net.Error
	return r.Err != nil && errors.As(r.Err, &ne) && ne.Timeout()
}

// Run executes plan and returns every result in start order.
func Run(ctx context.Context, plan Plan) []Result {
	interval := time.Second / time.Duration(plan.Rate)
	total := int(plan.Duration / interval)
	results := make([]Result, total)
	var wg sync.WaitGroup
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := range total {
		if i > 0 {
			select {
			case <-tick.C:
			case <-ctx.Done():
				results = results[:i]
				wg.Wait()
				return results
			}
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = Do(plan.Client, i, plan.Build)
		}(i)
	}
	wg.Wait()
	return results
}

// Do sends the i-th request and records its outcome.
func Do(client *http.Client, i int, build func(int) (*http.Request, error)) Result {
	r := Result{Seq: i, Start: time.Now()}
	req, err := build(i)
	if err != nil {
		r.Err, r.End = fmt.Errorf("build request: %w", err), time.Now()
		return r
	}
	resp, err := client.Do(req)
	if err != nil {
		r.Err, r.End = err, time.Now()
		return r
	}
	r.Status, r.Header = resp.StatusCode, resp.Header
	r.Body, err = io.ReadAll(io.LimitReader(resp.Body, 2048))
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	resp.Body.Close()
	r.End = time.Now()
	if err != nil {
		r.Err = fmt.Errorf("read body: %w", err)
	}
	return r
}

// Summary counts the outcomes of a load.
type Summary struct {
	Sent       int
	ByStatus   map[int]int
	Transport  int // requests without a response (refused, reset, timeout)
	Refused    int
	TimedOut   int
	MaxLatency time.Duration
	P99Latency time.Duration
}

// Summarize counts results.
func Summarize(results []Result) Summary {
	s := Summary{Sent: len(results), ByStatus: map[int]int{}}
	lat := make([]time.Duration, 0, len(results))
	for _, r := range results {
		d := r.Duration()
		lat = append(lat, d)
		if d > s.MaxLatency {
			s.MaxLatency = d
		}
		switch {
		case r.Err != nil:
			s.Transport++
			if r.Refused() {
				s.Refused++
			}
			if r.TimedOut() {
				s.TimedOut++
			}
		default:
			s.ByStatus[r.Status]++
		}
	}
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		s.P99Latency = lat[min(len(lat)*99/100, len(lat)-1)]
	}
	return s
}

// StatusString renders the status counts, e.g. "200×480 503×20".
func (s Summary) StatusString() string {
	keys := make([]int, 0, len(s.ByStatus))
	for k := range s.ByStatus {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	out := ""
	for _, k := range keys {
		if out != "" {
			out += " "
		}
		out += fmt.Sprintf("%d×%d", k, s.ByStatus[k])
	}
	if s.Transport > 0 {
		if out != "" {
			out += " "
		}
		out += fmt.Sprintf("no-response×%d", s.Transport)
	}
	return out
}

// NewClient returns a client for loopback load with a request timeout;
// keepAlive false opens one connection per request, which makes "accepted"
// unambiguous during a shutdown.
func NewClient(timeout time.Duration, keepAlive bool) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DisableKeepAlives:   !keepAlive,
		MaxIdleConnsPerHost: 64,
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
	}
	return &http.Client{Timeout: timeout, Transport: tr}
}
