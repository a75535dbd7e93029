package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Case is one hostile input. Path may hold {id} (the target note of
// account A); Key picks the credential: "" is the default for the service
// (account A's notes key, the marketdata load key), "B" account B's.
type Case struct {
	Class  string
	Svc    string // "notes" or "market"
	Method string
	Path   string
	Header map[string]string
	Body   []byte
	Key    string
	// Want lists the documented statuses; anything else is unexpected.
	Want []int
	// Check inspects an accepted answer (e.g. a byte-exact round trip);
	// it returns a failure or "".
	Check func(e *Env, r Response) string
	// Fresh gives the case a new note of account A as {fresh} in Path, for
	// writes that are meant to succeed without touching the target.
	Fresh bool
}

// Statuses the table refers to.
var (
	bad       = []int{400, 422}
	badOrOK   = []int{200, 400, 422}
	notFound  = []int{404}
	tooLarge  = []int{413}
	mediaType = []int{415}
	method    = []int{405}
	// pathish answers for ids that are not ids: not found, or a redirect
	// to the cleaned path, or a 400 for an unparsable path.
	pathish = []int{301, 307, 308, 400, 404, 405}
	longURL = []int{200, 400, 404, 414, 422, 431}
	// flood is a query with more parameters than Go's url.ParseQuery
	// accepts (10,000): the service sees no access_key at all.
	flood = []int{400, 401, 414, 422, 431}
)

func nc(class, m, path string, body []byte, want []int) Case {
	return Case{Class: class, Svc: "notes", Method: m, Path: path, Body: body, Want: want}
}

func mc(class, path string, want []int) Case {
	return Case{Class: class, Svc: "market", Method: http.MethodGet, Path: path, Want: want}
}

// payloads are SQL and HTML metacharacters that must be stored and
// returned verbatim, never interpreted.
var payloads = []string{
	`' OR '1'='1`,
	`'; DROP TABLE notes; --`,
	`" OR ""="`,
	`1; SELECT pg_sleep(3)--`,
	`'); SELECT pg_sleep(3); --`,
	`%' AND 1=1 --`,
	`\'; \"; \\`,
	`$1 $2 ::text`,
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`&lt;b&gt; &amp; &#x27;`,
	`{{7*7}} ${7*7} <%= 7*7 %>`,
	"` ; | && $(id)",
	`/* comment */ UNION SELECT * FROM api_keys`,
	`_ % * ? [a-z] \x00`,
}

// Cases builds the whole table. id is a note of account A that every
// mutating case must leave unchanged; keyA is put into duplicated
// access_key cases.
func Cases(e *Env, id string) []Case {
	var cs []Case
	add := func(c ...Case) { cs = append(cs, c...) }
	valid := `{"title":"a title","content":"some content","tags":["x"]}`

	// Malformed and truncated JSON, on every endpoint with a body.
	malformed := []string{"", "{", "}", "[]", "null", `"str"`, "123", "true", "{'title':'a'}", `{"title":"a","content":"b"}{}`,
		`{"title":"a","content":"b"} x`, `{"title":1,"content":2}`, `{"title":"a","content":"b","extra":1}`, `{"title":["a"],"content":{}}`,
		`{"title":"a","content":"b","tags":"x"}`, `{"title":"a","content":"b","tags":[1,2]}`, `{"title":"a",,"content":"b"}`, `{"title":"a" "content":"b"}`,
		"\xef\xbb\xbf" + valid, `{"title":"a\u","content":"b"}`, `{"title":"a","content":"b",}`, `{"title":null,"content":null}`,
		strings.Repeat("{", 100), strings.Repeat(`"a":`, 100)}
	for _, b := range malformed {
		add(nc("malformed JSON", "POST", "/v1/notes", []byte(b), bad))
		add(nc("malformed JSON", "PUT", "/v1/notes/{id}", []byte(b), bad))
		add(Case{Class: "malformed JSON", Svc: "notes", Method: "PATCH", Path: "/v1/notes/{id}", Body: []byte(b),
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Want: bad})
	}
	// The webhook endpoints take JSON too; none of these creates one
	// (a note's fields are unknown members there).
	for _, b := range malformed {
		add(nc("malformed JSON", "POST", "/v1/webhook_endpoints", []byte(b), bad))
	}
	add(nc("JSON nested 10,000+ deep", "POST", "/v1/webhook_endpoints", []byte(`{"url":`+strings.Repeat("[", 10_000)+strings.Repeat("]", 10_000)+"}"), bad))
	add(nc("bodies over the limit", "POST", "/v1/webhook_endpoints", []byte(`{"url":"https://`+strings.Repeat("a", 2<<20)+`.example/"}`), tooLarge))
	// Webhook URLs that reach our own network or the cloud's metadata
	// service, or are not https: refused before anything is stored.
	for _, u := range []string{"https://127.0.0.1/", "https://localhost/", "https://[::1]/", "https://10.0.0.1/", "https://172.16.0.1/",
		"https://192.168.1.1/", "https://100.64.0.1/", "https://169.254.169.254/latest/meta-data/", "https://[fd00:ec2::254]/",
		"https://[fe80::1]/", "https://0.0.0.0/", "https://[::ffff:127.0.0.1]/", "http://93.184.215.14/", "https://u:p@93.184.215.14/",
		"file:///etc/passwd", "gopher://127.0.0.1:6379/_INFO"} {
		b, _ := json.Marshal(map[string]string{"url": u})
		add(nc("webhook URLs into our network", "POST", "/v1/webhook_endpoints", b, []int{422}))
	}
	for i := 1; i < len(valid); i += 3 {
		add(nc("truncated JSON", "POST", "/v1/notes", []byte(valid[:i]), bad))
		add(nc("truncated JSON", "PUT", "/v1/notes/{id}", []byte(valid[:i]), bad))
	}

	// Deep nesting.
	for _, depth := range []int{10_000, 100_000} {
		add(nc("JSON nested 10,000+ deep", "POST", "/v1/notes", []byte(strings.Repeat("[", depth)+strings.Repeat("]", depth)), bad))
		add(nc("JSON nested 10,000+ deep", "POST", "/v1/notes", []byte(strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth)), bad))
		add(nc("JSON nested 10,000+ deep", "POST", "/v1/notes", []byte(`{"title":"t","content":"c","tags":`+strings.Repeat("[", depth)+strings.Repeat("]", depth)+"}"), bad))
		add(nc("JSON nested 10,000+ deep", "PUT", "/v1/notes/{id}", []byte(`{"title":`+strings.Repeat("[", depth)+strings.Repeat("]", depth)+`,"content":"c"}`), bad))
		add(Case{Class: "JSON nested 10,000+ deep", Svc: "notes", Method: "PATCH", Path: "/v1/notes/{id}", Want: bad,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Body: []byte(`{"title":` + strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + "}")})
	}

	// Bodies over the limit (1 MiB) and fields over theirs.
	huge := func(n int) []byte {
		b, _ := json.Marshal(map[string]string{"title": "big", "content": strings.Repeat("x", n)})
		return b
	}
	add(nc("bodies over the limit", "POST", "/v1/notes", huge(1<<20+1), tooLarge))
	add(nc("bodies over the limit", "POST", "/v1/notes", huge(4<<20), tooLarge))
	add(nc("bodies over the limit", "PUT", "/v1/notes/{id}", huge(2<<20), tooLarge))
	add(nc("bodies over the limit", "POST", "/v1/notes", bytes.Repeat([]byte("A"), 3<<20), []int{400, 413}))
	add(Case{Class: "bodies over the limit", Svc: "notes", Method: "PATCH", Path: "/v1/notes/{id}", Body: huge(2 << 20),
		Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Want: tooLarge})
	add(nc("bodies over the limit", "POST", "/v1/notes", huge(100<<10+1), []int{422}))
	add(nc("bodies over the limit", "PUT", "/v1/notes/{id}", huge(100<<10+1), []int{422}))
	longTitle, _ := json.Marshal(map[string]string{"title": strings.Repeat("t", 201), "content": "c"})
	add(nc("bodies over the limit", "POST", "/v1/notes", longTitle, []int{422}))
	manyTags, _ := json.Marshal(map[string]any{"title": "t", "content": "c", "tags": strings.Split(strings.Repeat("t,", 33), ",")[:33]})
	add(nc("bodies over the limit", "POST", "/v1/notes", manyTags, []int{422}))
	longTag, _ := json.Marshal(map[string]any{"title": "t", "content": "c", "tags": []string{strings.Repeat("g", 65)}})
	add(nc("bodies over the limit", "POST", "/v1/notes", longTag, []int{422}))
	add(Case{Class: "bodies over the limit", Svc: "market", Method: "GET", Path: "/v1/eod?symbols=GOOG&limit=1", Body: bytes.Repeat([]byte("x"), 2<<20), Want: []int{200, 400, 413}})

	// Invalid UTF-8 and NUL.
	for _, bad8 := range []string{"\xff\xfe", "a\x00b", "\xc0\xaf", "\xed\xa0\x80", "ok\xe2\x82", "\x00"} {
		for _, field := range []string{"title", "content"} {
			m := map[string]any{"title": "t", "content": "c"}
			m[field] = "x" + bad8 + "y"
			add(nc("invalid UTF-8 and NUL", "POST", "/v1/notes", rawJSON(m), []int{400, 422}))
			add(nc("invalid UTF-8 and NUL", "PUT", "/v1/notes/{id}", rawJSON(m), []int{400, 422}))
		}
		add(nc("invalid UTF-8 and NUL", "POST", "/v1/notes", rawJSON(map[string]any{"title": "t", "content": "c", "tags": []string{"g" + bad8}}), []int{400, 422}))
		q := url.QueryEscape(bad8)
		add(nc("invalid UTF-8 and NUL", "GET", "/v1/notes?q="+q, nil, badOrOK))
		add(nc("invalid UTF-8 and NUL", "GET", "/v1/notes?tag="+q, nil, badOrOK))
		add(nc("invalid UTF-8 and NUL", "GET", "/v1/notes/"+q, nil, pathish))
		add(mc("invalid UTF-8 and NUL", "/v1/eod?symbols=GOOG"+q, []int{422}))
		add(mc("invalid UTF-8 and NUL", "/v1/tickers?search="+q, badOrOK))
		add(mc("invalid UTF-8 and NUL", "/v1/tickers/"+q, []int{404, 422}))
		add(mc("invalid UTF-8 and NUL", "/v1/eod?symbols=GOOG&date_from="+q, []int{422}))
	}
	// JSON escapes for NUL and a lone surrogate: NUL must be refused; a
	// lone surrogate decodes to U+FFFD and may be stored.
	add(nc("invalid UTF-8 and NUL", "POST", "/v1/notes", []byte(`{"title":"t\u0000","content":"c"}`), []int{400, 422}))
	add(nc("invalid UTF-8 and NUL", "POST", "/v1/notes", []byte(`{"title":"t","content":"c\u0000d"}`), []int{400, 422}))
	add(nc("invalid UTF-8 and NUL", "POST", "/v1/notes", []byte(`{"title":"t","content":"c\ud800"}`), []int{201, 400, 422}))

	// SQL and HTML metacharacters in every field (stored verbatim) and
	// every query parameter (never interpreted).
	for _, p := range payloads {
		for _, field := range []string{"title", "content", "tags"} {
			m := map[string]any{"title": "meta", "content": e.NoteContent("meta")}
			if field == "tags" {
				m["tags"] = []string{p}
			} else {
				m[field] = p
			}
			body, _ := json.Marshal(m)
			want := []int{201}
			if strings.Contains(p, "\\x00") && field == "tags" {
				want = []int{201, 422}
			}
			add(Case{Class: "SQL and HTML metacharacters", Svc: "notes", Method: "POST", Path: "/v1/notes", Body: body, Want: want, Check: roundTrip(m)})
		}
		q := url.QueryEscape(p)
		for _, param := range []string{"q", "tag", "sort", "limit", "offset"} {
			add(Case{Class: "SQL and HTML metacharacters", Svc: "notes", Method: "GET", Path: "/v1/notes?" + param + "=" + q, Want: badOrOK, Check: fast})
		}
		add(Case{Class: "SQL and HTML metacharacters", Svc: "notes", Method: "GET", Path: "/v1/notes/" + url.PathEscape(p), Want: pathish, Check: fast})
		for _, param := range []string{"symbols", "limit", "offset", "date_from", "date_to", "sort", "exchange"} {
			path := "/v1/eod?symbols=GOOG&" + param + "=" + q
			if param == "symbols" {
				path = "/v1/eod?symbols=" + q
			}
			add(Case{Class: "SQL and HTML metacharacters", Svc: "market", Method: "GET", Path: path, Want: []int{200, 400, 422}, Check: fast})
		}
		for _, path := range []string{"/v1/tickers?search=" + q, "/v1/tickers?symbols=" + q, "/v1/exchanges?search=" + q, "/v1/splits?symbols=" + q,
			"/v1/dividends?symbols=" + q, "/v1/tickers/" + url.PathEscape(p), "/v1/exchanges/" + url.PathEscape(p), "/v1/eod/" + url.PathEscape(p) + "?symbols=GOOG",
			"/v1/tickers/" + url.PathEscape(p) + "/eod"} {
			add(Case{Class: "SQL and HTML metacharacters", Svc: "market", Method: "GET", Path: path, Want: []int{200, 400, 404, 422}, Check: fast})
		}
	}
	// PUT and PATCH store them verbatim too, each on a fresh note.
	for _, p := range payloads {
		for _, field := range []string{"title", "content"} {
			m := map[string]any{"title": "meta", "content": e.NoteContent("meta")}
			m[field] = p
			body, _ := json.Marshal(m)
			add(Case{Class: "SQL and HTML metacharacters", Svc: "notes", Method: "PUT", Path: "/v1/notes/{fresh}", Body: body, Want: []int{200}, Fresh: true, Check: roundTrip(m)})
			patch, _ := json.Marshal(map[string]any{field: p})
			add(Case{Class: "SQL and HTML metacharacters", Svc: "notes", Method: "PATCH", Path: "/v1/notes/{fresh}", Body: patch, Want: []int{200}, Fresh: true,
				Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Check: patchedField(field, p)})
		}
	}

	// Hostile X-Request-ID values: refused ones are replaced, never echoed.
	for _, rid := range []string{"<script>alert(1)</script>", strings.Repeat("r", 129), strings.Repeat("r", 8<<10), "a\tb", "' OR 1=1 --", "é-unicode", "a b", "../../etc/passwd"} {
		for _, c := range []Case{
			{Class: "hostile X-Request-ID", Svc: "notes", Method: "GET", Path: "/v1/notes/{id}", Want: []int{200}},
			{Class: "hostile X-Request-ID", Svc: "market", Method: "GET", Path: "/v1/eod?symbols=GOOG&limit=1", Want: []int{200}},
			{Class: "hostile X-Request-ID", Svc: "notes", Method: "GET", Path: "/v1/notes/nope", Want: notFound},
		} {
			c.Header = map[string]string{"X-Request-ID": rid}
			c.Check = requestIDHandled(rid)
			add(c)
		}
	}

	// 64 KiB query strings.
	k64 := strings.Repeat("a", 64<<10)
	add(nc("64 KiB query strings", "GET", "/v1/notes?q="+k64, nil, longURL))
	add(nc("64 KiB query strings", "GET", "/v1/notes?tag="+k64, nil, longURL))
	add(nc("64 KiB query strings", "GET", "/v1/notes?q="+k64[:60<<10], nil, longURL))
	add(nc("64 KiB query strings", "GET", "/v1/notes?"+strings.Repeat("x=1&", 16<<10), nil, longURL))
	add(nc("64 KiB query strings", "GET", "/v1/notes/"+k64, nil, longURL))
	add(mc("64 KiB query strings", "/v1/eod?symbols="+k64, longURL))
	add(mc("64 KiB query strings", "/v1/eod?symbols=GOOG&date_from="+k64, longURL))
	add(mc("64 KiB query strings", "/v1/tickers?search="+k64, longURL))
	add(mc("64 KiB query strings", "/v1/eod?symbols=GOOG&"+strings.Repeat("x=1&", 16<<10), flood))
	add(mc("64 KiB query strings", "/v1/eod?symbols=GOOG&junk="+k64[:60<<10], longURL))
	add(mc("64 KiB query strings", "/v1/tickers/"+k64, longURL))

	// 10,000 symbols.
	syms := make([]string, 10_000)
	for i := range syms {
		syms[i] = fmt.Sprintf("S%d", i)
	}
	all := strings.Join(syms, ",")
	goog := strings.TrimSuffix(strings.Repeat("GOOG,", 10_000), ",")
	for _, path := range []string{"/v1/eod", "/v1/eod/latest", "/v1/tickers", "/v1/splits", "/v1/dividends", "/v1/eod/2008-10-14"} {
		add(mc("10,000 symbols", path+"?symbols="+all, []int{400, 414, 422, 431}))
		add(mc("10,000 symbols", path+"?symbols="+goog, []int{200, 400, 414, 422, 431}))
	}
	add(mc("10,000 symbols", "/v1/eod?symbols="+strings.Repeat(",", 10_000), []int{422}))
	add(mc("10,000 symbols", "/v1/eod?"+strings.TrimSuffix(strings.Repeat("symbols=GOOG&", 10_000), "&"), flood))
	tags10k := make([]string, 10_000)
	for i := range tags10k {
		tags10k[i] = fmt.Sprintf("t%d", i)
	}
	add(nc("10,000 symbols", "POST", "/v1/notes", rawJSON(map[string]any{"title": "t", "content": "c", "tags": tags10k}), []int{422}))
	add(nc("10,000 symbols", "GET", "/v1/notes?tag="+strings.Join(tags10k[:2000], "&tag="), nil, []int{200, 400, 422, 431}))

	// Negative, huge or non-numeric limit and offset.
	numbers := []string{"-1", "0", "1001", "1000", "99999999999999999999", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"1e3", "abc", "", "0x10", "%205", "5%20", "+5", "-0", "1.5", "NaN", "Infinity", "%00", "1%2C2", "%E2%82%AC"}
	for _, n := range numbers {
		for _, param := range []string{"limit", "offset"} {
			add(nc("negative, huge or non-numeric limit/offset", "GET", "/v1/notes?"+param+"="+n, nil, badOrOK))
			for _, path := range []string{"/v1/eod?symbols=GOOG,MSFT&", "/v1/tickers?", "/v1/exchanges?", "/v1/splits?symbols=GOOG&", "/v1/dividends?symbols=MSFT&", "/v1/exchanges/XNAS/tickers?"} {
				add(mc("negative, huge or non-numeric limit/offset", path+param+"="+n, badOrOK))
			}
		}
	}

	// Impossible dates, and date_from after date_to.
	dates := []string{"2023-02-30", "2023-13-01", "0000-00-00", "9999-99-99", "2023-02-29", "2024-02-30", "-2020-01-01", "2020-1-1", "20200101",
		"2020-01-01T25:00:00Z", "2020-01-01T00:00:00%2B99:00", "1e10", "%00", "2020-01-32", "99999-01-01", "0001-01-01", "2020-00-10", "yesterday"}
	for _, d := range dates {
		add(mc("impossible dates and date_from > date_to", "/v1/eod?symbols=GOOG&date_from="+d, badOrOK))
		add(mc("impossible dates and date_from > date_to", "/v1/eod?symbols=GOOG&date_to="+d, badOrOK))
		add(mc("impossible dates and date_from > date_to", "/v1/eod/"+d+"?symbols=GOOG", []int{200, 400, 404, 422}))
		add(mc("impossible dates and date_from > date_to", "/v1/tickers/GOOG/eod/"+d, []int{200, 400, 404, 422}))
		add(mc("impossible dates and date_from > date_to", "/v1/splits?symbols=GOOG&date_from="+d, badOrOK))
		add(mc("impossible dates and date_from > date_to", "/v1/dividends?symbols=MSFT&date_to="+d, badOrOK))
	}
	for _, path := range []string{"/v1/eod?symbols=GOOG&", "/v1/tickers/GOOG/eod?", "/v1/splits?symbols=GOOG&", "/v1/dividends?symbols=MSFT&"} {
		add(mc("impossible dates and date_from > date_to", path+"date_from=2020-01-01&date_to=2019-01-01", []int{200, 400, 422}))
		add(mc("impossible dates and date_from > date_to", path+"date_from=2020-01-01T00:00:01Z&date_to=2020-01-01T00:00:00Z", []int{200, 400, 422}))
	}

	// Ids with path traversal or percent-encoded slashes. Account B's key
	// on the mutating ones: even a path that resolved to A's note would
	// not be B's to change.
	trav := []string{"..", "../notes", "..%2f..%2fetc%2fpasswd", "%2e%2e", "%2e%2e%2f{id}", "x%2F..%2F{id}", "{id}%2F", "{id}/..", "{id}%2f..%2f{id}",
		"..%5c{id}", "{id}%00", "%252e%252e", "{id};x", "{id}%3Bx", "./{id}", "%2f{id}", "{id}%20", "%7Bid%7D", "*", "{id}#x"}
	for _, t := range trav {
		add(nc("ids with path traversal or encoded slashes", "GET", "/v1/notes/"+t, nil, pathish))
		add(Case{Class: "ids with path traversal or encoded slashes", Svc: "notes", Method: "DELETE", Path: "/v1/notes/" + t, Key: "B", Want: pathish})
		add(Case{Class: "ids with path traversal or encoded slashes", Svc: "notes", Method: "PUT", Path: "/v1/notes/" + t, Key: "B", Want: pathish,
			Body: []byte(`{"title":"pwned","content":"pwned"}`)})
	}
	add(nc("ids with path traversal or encoded slashes", "GET", "/v1/notes//{id}", nil, pathish))
	add(nc("ids with path traversal or encoded slashes", "GET", "/v1/notes/{id}/", nil, pathish))
	add(nc("ids with path traversal or encoded slashes", "GET", "/notes/..%2fv1%2fnotes%2f{id}", nil, pathish))
	for _, t := range []string{"..%2Fexchanges", "GOOG%2Feod", "..%2f..%2f", "GOOG%2F..%2F..%2Fexchanges", "%2e%2e", "GOOG%00"} {
		add(mc("ids with path traversal or encoded slashes", "/v1/tickers/"+t, []int{301, 307, 308, 400, 404, 422}))
		add(mc("ids with path traversal or encoded slashes", "/v1/exchanges/"+t, []int{301, 307, 308, 400, 404, 422}))
		add(mc("ids with path traversal or encoded slashes", "/v1/eod/"+t+"?symbols=GOOG", []int{301, 307, 308, 400, 404, 422}))
	}

	// Duplicate query parameters.
	for _, q := range []string{"limit=1&limit=1000", "limit=1&limit=abc", "offset=0&offset=-1", "sort=title&sort=-title", "sort=title&sort=x", "q=a&q=b", "tag=a&tag=a"} {
		add(nc("duplicate query parameters", "GET", "/v1/notes?"+q, nil, badOrOK))
	}
	for _, q := range []string{"symbols=GOOG&symbols=MSFT", "symbols=GOOG&symbols=", "symbols=GOOG&limit=5&limit=abc", "symbols=GOOG&limit=5&limit=10", "symbols=GOOG&offset=1&offset=2",
		"symbols=GOOG&sort=ASC&sort=DESC", "symbols=GOOG&date_from=2008-01-01&date_from=2009-01-01", "symbols=GOOG&exchange=XNAS&exchange=XNYS"} {
		add(mc("duplicate query parameters", "/v1/eod?"+q, badOrOK))
	}
	// A repeated access_key is ambiguous; refusing it as invalid is fine.
	dupKey := mc("duplicate query parameters", "/v1/eod?symbols=GOOG&access_key="+e.MarketKey, []int{200, 400, 401, 422})
	add(dupKey)

	// Wrong methods and wrong content types.
	for _, m := range []string{"PUT", "DELETE", "PATCH"} {
		add(nc("wrong methods and content types", m, "/v1/notes", []byte(valid), method))
	}
	add(nc("wrong methods and content types", "POST", "/v1/notes/{id}", []byte(valid), method))
	for _, m := range []string{"TRACE", "OPTIONS", "PROPFIND", "FOO", "CONNECT"} {
		add(nc("wrong methods and content types", m, "/v1/notes", nil, []int{204, 400, 404, 405}))
		add(nc("wrong methods and content types", m, "/v1/notes/{id}", nil, []int{204, 400, 404, 405}))
		add(mc("wrong methods and content types", "/v1/eod?symbols=GOOG", nil))
		cs[len(cs)-1].Method, cs[len(cs)-1].Want = m, []int{204, 400, 404, 405}
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		for _, path := range []string{"/v1/eod?symbols=GOOG", "/v1/tickers", "/v1/exchanges/XNAS", "/healthz", "/metrics"} {
			c := mc("wrong methods and content types", path, method)
			c.Method = m
			add(c)
		}
	}
	for _, ct := range []string{"text/plain", "application/xml", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "application/jsonx",
		"application/json-patch+json", "", "image/png", "application/json/../xml", strings.Repeat("a", 8<<10)} {
		h := map[string]string{"Content-Type": ct}
		if ct == "" {
			h = map[string]string{"Content-Type": ""}
		}
		add(Case{Class: "wrong methods and content types", Svc: "notes", Method: "POST", Path: "/v1/notes", Body: []byte(valid), Header: h, Want: mediaType})
		add(Case{Class: "wrong methods and content types", Svc: "notes", Method: "PUT", Path: "/v1/notes/{id}", Body: []byte(valid), Header: h, Want: mediaType})
		add(Case{Class: "wrong methods and content types", Svc: "notes", Method: "PATCH", Path: "/v1/notes/{id}", Body: []byte(`{"title":"x"}`), Header: h, Want: mediaType})
	}
	add(Case{Class: "wrong methods and content types", Svc: "notes", Method: "PATCH", Path: "/v1/notes/{id}", Body: []byte(`{"title":"x"}`),
		Header: map[string]string{"Content-Type": "application/json; charset=latin1"}, Want: mediaType})

	for i := range cs {
		cs[i].Path = strings.ReplaceAll(cs[i].Path, "{id}", id)
	}
	return cs
}

// rawJSON renders m as JSON without escaping invalid UTF-8, so the bytes
// reach the server as they are.
func rawJSON(m map[string]any) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	first := true
	for _, k := range []string{"title", "content", "tags"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		b.WriteString(`"` + k + `":`)
		switch x := v.(type) {
		case string:
			b.WriteString(`"` + rawEscape(x) + `"`)
		case []string:
			b.WriteString("[")
			for i, s := range x {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(`"` + rawEscape(s) + `"`)
			}
			b.WriteString("]")
		}
	}
	b.WriteString("}")
	return b.Bytes()
}

// rawEscape escapes quotes and backslashes only; control bytes other than
// NUL stay raw too, which is itself invalid JSON for bytes < 0x20.
func rawEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// patchedField checks a merge patch stored field as sent.
func patchedField(field, value string) func(e *Env, r Response) string {
	return func(e *Env, r Response) string {
		got, problem := storedNote(e, r, "patch")
		if problem != "" {
			return problem
		}
		stored, want := got.Content, value
		if field == "title" {
			stored, want = got.Title, strings.TrimSpace(value)
		}
		if stored != want {
			return fmt.Sprintf("%s stored as %q, sent %q", field, stored, value)
		}
		return ""
	}
}

// storedNote reads back, as stored, the note that the answer r to a create
// or patch (what) returned; problem says why it could not.
func storedNote(e *Env, r Response, what string) (stored Note, problem string) {
	var n Note
	if err := json.Unmarshal(r.Body, &n); err != nil {
		return Note{}, what + " answer: " + err.Error()
	}
	_, stored, err := e.GetNote(e.NotesKeyA, n.ID)
	if err != nil {
		return Note{}, err.Error()
	}
	return stored, ""
}

// requestIDHandled checks an X-Request-ID is echoed only when it is the
// documented 1..128 printable ASCII characters (space included).
func requestIDHandled(sent string) func(e *Env, r Response) string {
	return func(e *Env, r Response) string {
		valid := len(sent) >= 1 && len(sent) <= 128
		for _, c := range sent {
			if c < 0x20 || c > 0x7e {
				valid = false
			}
		}
		got := r.Header.Get("X-Request-ID")
		switch {
		case got == "":
			return "no X-Request-ID in the answer"
		case !valid && got == sent:
			return fmt.Sprintf("invalid X-Request-ID %.40q echoed", sent)
		}
		return ""
	}
}

// fast fails an answer that took long enough to suggest a pg_sleep ran.
func fast(_ *Env, r Response) string {
	if r.Dur >= 3*time.Second {
		return fmt.Sprintf("took %s: an injected pg_sleep may have run", r.Dur.Round(time.Millisecond))
	}
	return ""
}

// roundTrip checks a created note stores title, content and tags as sent
// (tags are trimmed and case-folded by contract).
func roundTrip(sent map[string]any) func(e *Env, r Response) string {
	return func(e *Env, r Response) string {
		got, problem := storedNote(e, r, "create")
		if problem != "" {
			return problem
		}
		if t := sent["title"].(string); got.Title != strings.TrimSpace(t) {
			return fmt.Sprintf("title stored as %q, sent %q", got.Title, t)
		}
		if c := sent["content"].(string); got.Content != c {
			return fmt.Sprintf("content stored as %q, sent %q", got.Content, c)
		}
		if tags, ok := sent["tags"].([]string); ok {
			want := strings.ToLower(strings.TrimSpace(tags[0]))
			if !slices.Contains(got.Tags, want) {
				return fmt.Sprintf("tags stored as %q, sent %q", got.Tags, tags)
			}
		}
		return ""
	}
}

// Hostile runs the table and the raw-connection cases, then checks the
// target note and a market answer are byte-exact as before.
func Hostile(ctx context.Context, e *Env) {
	target, _, err := e.CreateNote(e.NotesKeyA, "hostile target ✓ 漢字 שלום", e.NoteContent("Target content <b>&</b> ' \" \\ 🚀"), []string{"keep", "ünïcode"})
	if err != nil {
		e.Report.Error("hostile setup: %v", err)
		return
	}
	snap, err := e.SnapshotNote(e.NotesKeyA, target.ID)
	if err != nil {
		e.Report.Error("hostile setup: %v", err)
		return
	}
	marketRef := "/v1/eod?symbols=GOOG,GSPC.INDX&date_to=2008-10-14&limit=4"
	mref, err := e.Do(e.MarketRequest(http.MethodGet, marketRef, e.MarketKey))
	if err != nil || mref.Status != 200 {
		e.Report.Error("hostile setup: market reference: %v %d", err, mref.Status)
	}

	cases := Cases(e, target.ID)
	var wg sync.WaitGroup
	wg.Go(func() { rawCases(ctx, e) })
	work := make(chan Case)
	for range 4 {
		wg.Go(func() {
			for c := range work {
				runCase(e, c)
			}
		})
	}
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		work <- c
	}
	close(work)
	wg.Wait()

	ok, detail := e.Unchanged(e.NotesKeyA, snap)
	s := e.Report.SecurityCheck("Stored data byte-exact after the hostile-input suite")
	s.Check("target note unchanged (body and ETag)", ok, "%s", orDefault(detail, "GET "+target.ID+" identical"))
	after, err := e.Do(e.MarketRequest(http.MethodGet, marketRef, e.MarketKey))
	s.Check("market answer unchanged", err == nil && bytes.Equal(after.Body, mref.Body), "GET %s identical before and after (%d bytes)", marketRef, len(after.Body))
	out, err := e.Stack.PSQL(ctx, e.NotesDB, "select count(*) from notes")
	s.Check("notes table still there", err == nil && out != "", "rows: %s %v", out, err)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func runCase(e *Env, c Case) {
	if c.Fresh {
		n, _, err := e.CreateNote(e.NotesKeyA, "fresh", e.NoteContent("fresh"), nil)
		if err != nil {
			e.Report.HostileResult(c.Class, 0, "create fresh note: "+err.Error())
			return
		}
		c.Path = strings.ReplaceAll(c.Path, "{fresh}", n.ID)
	}
	var req *http.Request
	if c.Svc == "notes" {
		key := e.NotesKeyA
		if c.Key == "B" {
			key = e.NotesKeyB
		}
		req = e.NotesRequest(c.Method, c.Path, key, c.Body, c.Header)
	} else {
		req = e.MarketRequest(c.Method, c.Path, e.MarketKey)
		if c.Body != nil {
			req.Body = http.NoBody
			req.ContentLength = int64(len(c.Body))
			req.GetBody = nil
			req.Body = readCloser{bytes.NewReader(c.Body)}
		}
	}
	resp, err := e.Do(req)
	// The suite's four workers share one account, which may run only two
	// unpaged listings at once: a documented 429 too-many-listings is
	// retried after its Retry-After, as a client would, and never counts.
	for try := 0; err == nil && resp.Status == 429 && bytes.Contains(resp.Body, []byte("too-many-listings")) && try < 10; try++ {
		time.Sleep(time.Second)
		req = e.NotesRequest(c.Method, c.Path, req.Header.Get("Authorization")[len("Bearer "):], c.Body, c.Header)
		resp, err = e.Do(req)
	}
	label := fmt.Sprintf("%s %s %.120q", c.Method, truncate(c.Path, 100), c.Body)
	if err != nil {
		e.Report.HostileResult(c.Class, 0, label+": no answer: "+err.Error())
		return
	}
	failure := ""
	if !slices.Contains(c.Want, resp.Status) {
		failure = fmt.Sprintf("%s: got %d, want %v: %.200s", label, resp.Status, c.Want, resp.Body)
	} else if resp.Status >= 400 && !serverLevel(resp) && !documentedError(serviceName(c.Svc), resp.Status, resp.Header, resp.Body) {
		failure = fmt.Sprintf("%s: %d without the documented error body: %.200s", label, resp.Status, resp.Body)
	} else if resp.Status == 405 && resp.Header.Get("Allow") == "" {
		failure = fmt.Sprintf("%s: 405 without an Allow header", label)
	} else if c.Check != nil && (resp.Status < 300 || c.Class == "hostile X-Request-ID") {
		if f := c.Check(e, resp); f != "" {
			failure = label + ": " + f
		}
	}
	e.Report.HostileResult(c.Class, resp.Status, failure)
}

// serverLevel reports an answer Go's HTTP server gives before any handler
// runs (an oversized header block, an unparsable request line): the
// service cannot shape those.
func serverLevel(r Response) bool {
	return r.Status == 431 || r.Status == 414 ||
		(r.Status == 400 && strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") && strings.HasPrefix(string(r.Body), "400 Bad Request"))
}

func serviceName(svc string) string {
	if svc == "notes" {
		return "notes-svc"
	}
	return "marketdata-svc"
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
}

// rawCases sends bodies and headers that never end over raw connections:
// the server's read timeouts must cut them off.
func rawCases(ctx context.Context, e *Env) {
	type raw struct {
		svc   string
		addr  string
		head  string
		drip  string // sent every 500 ms, forever
		bound time.Duration
	}
	notesBound := HTTPReadTimeout + 3*time.Second
	marketBound := 10*time.Second + 3*time.Second // marketdata-svc's fixed ReadTimeout
	auth := "Authorization: Bearer " + e.NotesKeyA + "\r\n"
	chunkedPost := "POST /v1/notes HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
	cases := []raw{
		{"notes", e.Notes.Addr, chunkedPost + "5\r\n{\"tit\r\n", "1\r\na\r\n", notesBound},
		{"notes", e.Notes.Addr, chunkedPost, "1\r\n \r\n", notesBound},
		{"notes", e.Notes.Addr, "POST /v1/notes HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"title\":\"", "a", notesBound},
		{"notes", e.Notes.Addr, "GET /v1/notes HTTP/1.1\r\nHost: x\r\n", "X-a: b\r\n", notesBound + 5*time.Second},
		{"market", e.Market.Addr, "GET /v1/eod?symbols=GOOG&access_key=" + e.MarketKey + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", "1\r\na\r\n", marketBound},
		{"market", e.Market.Addr, "GET /v1/eod?symbols=GOOG HTTP/1.1\r\nHost: x\r\n", "X-a: b\r\n", marketBound},
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Go(func() {
			class := "chunked bodies that never end"
			status, took, err := dripUntilCut(ctx, c.addr, c.head, c.drip, c.bound+2*time.Second)
			failure := ""
			switch {
			case err != nil:
				failure = fmt.Sprintf("%s %.60q: %v", c.svc, c.head, err)
			case took > c.bound:
				failure = fmt.Sprintf("%s %.60q: cut after %s, bound %s", c.svc, c.head, took.Round(time.Millisecond), c.bound)
			case status >= 500:
				failure = fmt.Sprintf("%s %.60q: status %d", c.svc, c.head, status)
			}
			e.Report.HostileResult(class, status, failure)
		})
	}
	wg.Wait()
}

// dripUntilCut writes head, then drip every 500 ms until the server
// answers or closes the connection; it returns the status (0 when the
// server closed without answering) and how long that took.
func dripUntilCut(ctx context.Context, addr, head, drip string, limit time.Duration) (int, time.Duration, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	start := time.Now()
	if _, err := conn.Write([]byte(head)); err != nil {
		return 0, 0, err
	}
	type answer struct {
		status int
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			got <- answer{0, nil} // closed without an answer: cut off
			return
		}
		resp.Body.Close()
		got <- answer{resp.StatusCode, nil}
	}()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for {
		select {
		case a := <-got:
			return a.status, time.Since(start), a.err
		case <-tick.C:
			_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = conn.Write([]byte(drip))
		case <-deadline:
			return 0, time.Since(start), fmt.Errorf("still open after %s", limit)
		case <-ctx.Done():
			return 0, time.Since(start), ctx.Err()
		}
	}
}
