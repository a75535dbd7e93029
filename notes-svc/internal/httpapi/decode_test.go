package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// classify names the outcome of decoding: "ok", the HTTP status, and the
// invalid fields for 422.
func classify(err error) (int, []string) {
	if err == nil {
		return 0, nil
	}
	p := problemFor(err)
	var fields []string
	for _, f := range p.Errors {
		fields = append(fields, f.Field)
	}
	return p.Status, fields
}

func TestDecodeDraft(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		status int
		fields []string
	}{
		{"minimal", `{"title":"t","content":""}`, 0, nil},
		{"with tags", `{"title":"t","content":"c","tags":["a","b"]}`, 0, nil},
		{"empty body", ``, 400, []string{"body"}},
		{"whitespace body", " \n", 400, []string{"body"}},
		{"truncated", `{"title":"t"`, 400, []string{"body"}},
		{"syntax", `{"title":}`, 400, []string{"body"}},
		{"trailing data", `{"title":"t","content":""} {}`, 400, []string{"body"}},
		{"trailing garbage", `{"title":"t","content":""}x`, 400, []string{"body"}},
		{"array body", `[]`, 422, []string{"body"}},
		{"string body", `"x"`, 422, []string{"body"}},
		{"null body", `null`, 422, []string{"body"}},
		{"missing both", `{}`, 422, []string{"title", "content"}},
		{"title null", `{"title":null,"content":""}`, 422, []string{"title"}},
		{"title number", `{"title":5,"content":""}`, 422, []string{"title"}},
		{"tags null", `{"title":"t","content":"","tags":null}`, 422, []string{"tags"}},
		{"tags wrong type", `{"title":"t","content":"","tags":[1]}`, 422, []string{"tags"}},
		{"unknown field", `{"title":"t","content":"","id":"note_x"}`, 422, []string{"id"}},
		{"invalid utf8", "{\"title\":\"t\",\"content\":\"\xff\"}", 422, []string{"content"}},
		{"raw NUL", "{\"title\":\"t\x00\",\"content\":\"\"}", 422, []string{"title"}},
		{"deep nesting", `{"title":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, 400, []string{"body"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeDraft([]byte(c.body))
			status, fields := classify(err)
			if status != c.status || !slices.Equal(fields, c.fields) {
				t.Errorf("decode %q: status %d fields %v (%v), want %d %v", c.body, status, fields, err, c.status, c.fields)
			}
		})
	}
}

func TestDecodePatch(t *testing.T) {
	p, err := decodePatch([]byte(`{"tags":null}`))
	if err != nil || p.Tags == nil || len(*p.Tags) != 0 || p.Title != nil || p.Content != nil {
		t.Errorf("tags null = %+v, %v; want empty tag list only", p, err)
	}
	p, err = decodePatch([]byte(`{"title":"x"}`))
	if err != nil || p.Title == nil || *p.Title != "x" || p.Tags != nil {
		t.Errorf("title = %+v, %v", p, err)
	}
	if _, err := decodePatch([]byte(`{"content":null}`)); !slices.Equal(second(classify(err)), []string{"content"}) {
		t.Errorf("content null: %v", err)
	}
	// RFC 7396: a non-object patch replaces the whole target, which a note
	// cannot become; null must not pass as "no change".
	for _, body := range []string{`null`, ` null `, `[]`, `"x"`, `1`} {
		if status, fields := classify(mustFail(t, body)); status != 422 || !slices.Equal(fields, []string{"body"}) {
			t.Errorf("patch %q = %d %v, want 422 [body]", body, status, fields)
		}
	}
}

func mustFail(t *testing.T, body string) error {
	t.Helper()
	_, err := decodePatch([]byte(body))
	if err == nil {
		t.Fatalf("patch %q accepted", body)
	}
	return err
}

func second(_ int, f []string) []string { return f }

func TestIfMatch(t *testing.T) {
	h := http.Header{}
	if c := ifMatch(h); c.Present {
		t.Error("no header gave a condition")
	}
	h.Set("If-Match", `"3", W/"4", "x", "5"`)
	if c := ifMatch(h); !c.Present || !slices.Equal(c.Versions, []int64{3, 5}) || c.Matches(4) {
		t.Errorf("condition = %+v", c)
	}
	h.Set("If-Match", `*`)
	if c := ifMatch(h); !c.Any {
		t.Error("* not recognised")
	}
	h.Set("If-Match", `garbage`)
	if c := ifMatch(h); !c.Present || c.Matches(1) {
		t.Error("garbage If-Match must match nothing")
	}
}

func TestIdempotencyKeyHeader(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", `"abc"`: "abc", " k-1 ": "k-1"} {
		h := http.Header{"Idempotency-Key": {in}}
		if got, err := idempotencyKey(h); err != nil || got != want {
			t.Errorf("idempotencyKey(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{`""`, strings.Repeat("k", 256), "caf\u00e9"} {
		h := http.Header{"Idempotency-Key": {in}}
		if _, err := idempotencyKey(h); err == nil {
			t.Errorf("idempotencyKey(%q) accepted", in)
		}
	}
}

func TestProblemForUnknownErrorIsGeneric(t *testing.T) {
	p := problemFor(errors.New(`pq: relation "notes" does not exist`))
	if p.Status != 500 || strings.Contains(p.Detail, "relation") {
		t.Errorf("problem = %+v", p)
	}
	if p := problemFor(notes.ErrUnavailable); p.Status != 503 {
		t.Errorf("unavailable = %d", p.Status)
	}
}

// FuzzDecodeNote checks that decoding and validating any body never
// panics, always gives a 400/422 or a draft that meets every limit.
func FuzzDecodeNote(f *testing.F) {
	for _, seed := range []string{
		`{"title":"t","content":"c","tags":["a"]}`,
		`{"title":" Émoji 🎉 ","content":"مرحبا 中文","tags":["Work","WORK"," x "]}`,
		`{"title":"t","content":"\u0000"}`,
		`{"title":"a\"b\u00e9","content":"x\\y","tags":["T\n"]}`,
		"{\"title\":\"\xff\",\"content\":\"\"}",
		`{"title":null}`, `[]`, `{"tags":null}`, `{}`, ``, `{"title":"t","content":""} x`,
		`{"title":"` + strings.Repeat("a", 201) + `","content":""}`,
		`{"title":"a","content":"","tags":[` + strings.Repeat(`"t",`, 40) + `"t"]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := decodeDraft(body)
		var ref struct {
			Title, Content string
			Tags           []string
		}
		if err == nil && json.Unmarshal(body, &ref) == nil &&
			(d.Title != ref.Title || d.Content != ref.Content || !slices.Equal(d.Tags, ref.Tags)) {
			t.Fatalf("decodeDraft(%q) = %+v, encoding/json decodes %+v", body, d, ref)
		}
		if err != nil {
			if s := problemFor(err).Status; s != 400 && s != 422 {
				t.Fatalf("decodeDraft(%q) error %v maps to %d", body, err, s)
			}
		} else {
			n, err := d.Normalize()
			if err != nil {
				if s := problemFor(err).Status; s != 422 {
					t.Fatalf("Normalize error %v maps to %d", err, s)
				}
			} else {
				checkDraft(t, n)
			}
		}
		if p, err := decodePatch(body); err == nil {
			if d, err := p.Apply(notes.Note{Title: "t", Tags: []string{}}); err == nil {
				checkDraft(t, d)
			}
		} else if s := problemFor(err).Status; s != 400 && s != 422 {
			t.Fatalf("decodePatch(%q) error %v maps to %d", body, err, s)
		}
	})
}

func checkDraft(t *testing.T, d notes.Draft) {
	t.Helper()
	n := utf8.RuneCountInString(d.Title)
	if n < 1 || n > notes.MaxTitleChars || strings.TrimSpace(d.Title) != d.Title || !utf8.ValidString(d.Title) {
		t.Fatalf("accepted title %q", d.Title)
	}
	if len(d.Content) > notes.MaxContentLen || !utf8.ValidString(d.Content) || strings.ContainsRune(d.Content, 0) {
		t.Fatalf("accepted content of %d bytes", len(d.Content))
	}
	if len(d.Tags) > notes.MaxTags {
		t.Fatalf("accepted %d tags", len(d.Tags))
	}
	for i, tag := range d.Tags {
		if c := utf8.RuneCountInString(tag); c < 1 || c > notes.MaxTagChars || notes.NormalizeTag(tag) != tag || slices.Contains(d.Tags[:i], tag) {
			t.Fatalf("accepted tag %q in %q", tag, d.Tags)
		}
	}
}
