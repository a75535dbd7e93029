package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	notesclient "github.com/tickerdesk/tickerdesk/clients/notes"
)

// validating is a transport that checks every answer the client gets
// against the OpenAPI document, as the raw-HTTP tests do.
type validating struct {
	t    *testing.T
	base http.RoundTripper
}

func (v validating) RoundTrip(r *http.Request) (*http.Response, error) {
	var reqBody []byte
	if r.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		_ = r.Body.Close()
	}
	sent := r.Clone(r.Context())
	sent.Body = io.NopCloser(bytes.NewReader(reqBody))
	resp, err := v.base.RoundTrip(sent)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	vr, _ := http.NewRequest(r.Method, r.URL.String(), bytes.NewReader(reqBody))
	vr.Header = r.Header.Clone()
	if err := validateResponse(v.t, vr, response{status: resp.StatusCode, header: resp.Header, body: body}); err != nil {
		v.t.Errorf("%s %s → %d does not match the OpenAPI document: %v\nbody: %.500s", r.Method, r.URL.Path, resp.StatusCode, err, body)
	}
	return resp, nil
}

// client is a notesclient of e's server with key, its answers validated.
func (e *env) client(t *testing.T, key string, rt ...func(http.RoundTripper) http.RoundTripper) *notesclient.Client {
	t.Helper()
	var tr http.RoundTripper = validating{t: t, base: e.srv.Client().Transport}
	for _, wrap := range rt {
		tr = wrap(tr)
	}
	c, err := notesclient.New(e.srv.URL, notesclient.WithAPIKey(key), notesclient.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientCreateGetList(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice := e.client(t, e.alice)

	n, err := alice.Create(ctx, notesclient.NewNote{Title: "Earnings", Content: "GOOG reports on Thursday", Tags: []string{"Research", " research "}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(n.ID, "note_") || n.Title != "Earnings" || !slices.Equal(n.Tags, []string{"research"}) ||
		n.CreatedAt.IsZero() || !n.CreatedAt.Equal(n.UpdatedAt) {
		t.Fatalf("created %+v", n)
	}
	got, err := alice.Get(ctx, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != n.ID || got.Content != "GOOG reports on Thursday" || !got.CreatedAt.Equal(n.CreatedAt) {
		t.Fatalf("got %+v, created %+v", got, n)
	}

	// Six more notes, every other one tagged, listed two per page.
	want := []string{n.ID}
	tagged := []string{n.ID}
	for i := range 6 {
		tags := []string{"other"}
		if i%2 == 0 {
			tags = []string{"research"}
		}
		m, err := alice.Create(ctx, notesclient.NewNote{Title: "n", Content: "c", Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, m.ID)
		if i%2 == 0 {
			tagged = append(tagged, m.ID)
		}
	}
	collect := func(p notesclient.ListParams) []string {
		t.Helper()
		var ids []string
		for m, err := range alice.List(ctx, p) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
		}
		return ids
	}
	if ids := collect(notesclient.ListParams{PageSize: 2}); !slices.Equal(ids, want) {
		t.Fatalf("listed %v, want %v in creation order", ids, want)
	}
	if ids := collect(notesclient.ListParams{Tag: "Research", PageSize: 3}); !slices.Equal(ids, tagged) {
		t.Fatalf("listed %v with tag research, want %v", ids, tagged)
	}
	if ids := collect(notesclient.ListParams{Q: "GOOG"}); !slices.Equal(ids, []string{n.ID}) {
		t.Fatalf("searched %v, want only %s", ids, n.ID)
	}

	if err := alice.Delete(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	_, err = alice.Get(ctx, n.ID)
	var pe *notesclient.Error
	if !errors.As(err, &pe) || pe.Status != http.StatusNotFound || pe.Code != "not-found" {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestClientTenantIsolation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	n, err := e.client(t, e.alice).Create(ctx, notesclient.NewNote{Title: "mine", Content: "alice's"})
	if err != nil {
		t.Fatal(err)
	}
	bob := e.client(t, e.bob)
	_, err = bob.Get(ctx, n.ID)
	var pe *notesclient.Error
	if !errors.As(err, &pe) || pe.Status != http.StatusNotFound || pe.Code != "not-found" || pe.RequestID == "" {
		t.Fatalf("bob got alice's note: %v", err)
	}
	for m, err := range bob.List(ctx, notesclient.ListParams{}) {
		t.Fatalf("bob listed %+v, %v", m, err)
	}

	// A read-only key cannot create: 403 with its problem.
	_, err = e.client(t, e.reader).Create(ctx, notesclient.NewNote{Title: "t", Content: "c"})
	if !errors.As(err, &pe) || pe.Status != http.StatusForbidden {
		t.Fatalf("read-only create: %v", err)
	}
	// An invalid note is a 422 naming the field.
	_, err = e.client(t, e.alice).Create(ctx, notesclient.NewNote{Title: "", Content: "c"})
	if !errors.As(err, &pe) || pe.Status != http.StatusUnprocessableEntity || len(pe.Errors) == 0 || pe.Errors[0].Field != "title" {
		t.Fatalf("invalid create: %v", err)
	}
}

// lostAnswer hands the first POST to the server, then drops the server's
// answer and reports 503 instead, as a proxy would after a timeout: the
// note exists, but the client does not know it.
type lostAnswer struct {
	base http.RoundTripper
	lost atomic.Bool
}

func (l *lostAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost || l.lost.Swap(true) {
		return resp, err
	}
	_ = resp.Body.Close()
	return &http.Response{
		StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Retry-After": {"0"}, "Content-Type": {"text/plain"}},
		Body:    io.NopCloser(strings.NewReader("upstream timed out")),
		Request: r,
	}, nil
}

func TestClientCreateRetryDoesNotDuplicate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	lost := &lostAnswer{}
	c := e.client(t, e.alice, func(rt http.RoundTripper) http.RoundTripper { lost.base = rt; return lost })
	n, err := c.Create(ctx, notesclient.NewNote{Title: "once", Content: "only once"})
	if err != nil {
		t.Fatal(err)
	}
	if !lost.lost.Load() {
		t.Fatal("the first answer was not dropped")
	}
	var ids []string
	for m, err := range c.List(ctx, notesclient.ListParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{n.ID}) {
		t.Fatalf("notes %v after one retried Create, want only %s: the retry created another", ids, n.ID)
	}
}
