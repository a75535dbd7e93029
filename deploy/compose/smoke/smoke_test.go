package smoke

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	marketdataclient "github.com/tickerdesk/tickerdesk/clients/marketdata"
	notesclient "github.com/tickerdesk/tickerdesk/clients/notes"
)

// spoofed is the X-Forwarded-For a client forges.
const spoofed = "203.0.113.7"

// call is one tagged request: the X-Request-Id it sends (none when empty)
// and the answer's headers, which the clients' methods do not return.
type call struct {
	id     string
	header http.Header
}

type callKey struct{}

// tagged returns ctx carrying a call with request id id.
func tagged(ctx context.Context, id string) (context.Context, *call) {
	c := &call{id: id}
	return context.WithValue(ctx, callKey{}, c), c
}

// tagging is the clients' transport: it sends a tagged call's request id
// and keeps its answer's headers.
type tagging struct{ next http.RoundTripper }

func (t tagging) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(callKey{}).(*call)
	if c != nil && c.id != "" {
		req = req.Clone(req.Context())
		req.Header.Set("X-Request-Id", c.id)
	}
	resp, err := t.next.RoundTrip(req)
	if c != nil && err == nil {
		c.header = resp.Header
	}
	return resp, err
}

// clientIP is the client_ip of a JSON log line.
func clientIP(t *testing.T, line string) string {
	t.Helper()
	var l struct {
		ClientIP string `json:"client_ip"`
	}
	if err := json.Unmarshal([]byte(line), &l); err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	return l.ClientIP
}

func TestComposeSmoke(t *testing.T) {
	start := time.Now()
	s := up(t, false)
	ctx := context.Background()
	run := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()%1_000_000)

	for _, svc := range []string{"notes-svc-1", "notes-svc-2", "marketdata-svc-1", "marketdata-svc-2"} {
		for _, port := range []string{"8080", "8081"} {
			if out, err := s.run(ctx, "port", svc, port); err == nil && strings.TrimSpace(out) != "" && !strings.HasSuffix(strings.TrimSpace(out), ":0") {
				t.Fatalf("%s publishes port %s (%s); only the gateway may", svc, port, strings.TrimSpace(out))
			}
		}
	}

	checkAdmin(t, s)

	notesKey := s.newKey("notes-svc-1", "/notes-svc")
	marketdataKey := s.newKey("marketdata-svc-1", "/marketdata-svc")
	t.Logf("keys created (%s…, %s…)", notesKey[:4], marketdataKey[:4])
	hc := &http.Client{Timeout: 10 * time.Second, Transport: tagging{next: s.client.Transport}}
	// No retries: a 429 or 503 is an outcome the checks count.
	notes, err := notesclient.New(s.gateway, notesclient.WithAPIKey(notesKey), notesclient.WithHTTPClient(hc), notesclient.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	market, err := marketdataclient.New(s.gateway, marketdataclient.WithAccessKey(marketdataKey), marketdataclient.WithHTTPClient(hc), marketdataclient.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}

	// notes: create, then read back, with a caller's request id and without.
	rid := "smoke-" + run
	cctx, created := tagged(ctx, rid)
	note, err := notes.Create(cctx, notesclient.NewNote{Title: "compose smoke", Content: "hello from compose-smoke", Tags: []string{"smoke"}})
	if err != nil {
		t.Fatalf("create note: %v", err)
	}
	if got := created.header.Get("X-Request-Id"); got != rid {
		t.Fatalf("POST /v1/notes echoed X-Request-Id %q, want %q", got, rid)
	}
	gctx, read := tagged(ctx, "")
	got, err := notes.Get(gctx, note.ID)
	if err != nil || got.Title != "compose smoke" {
		t.Fatalf("get note %s: %+v, %v", note.ID, got, err)
	}
	made := read.header.Get("X-Request-Id")
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(made) {
		t.Fatalf("GET without X-Request-Id: the gateway made no id (%q)", made)
	}
	eventually(t, func() []string {
		return s.logLines([]string{"notes-svc-1", "notes-svc-2"}, `"request_id":"`+rid+`"`, `"msg":"request"`, `"method":"POST"`)
	})
	t.Logf("notes-svc: created and read note %s; X-Request-Id passed through (%s), made (%s) and logged", note.ID, rid, made)

	// marketdata: one EOD record of the demo data, v1 through the client, v2 as well.
	var eod marketdataclient.EOD
	for r, err := range market.EOD(ctx, marketdataclient.EODParams{Symbols: []string{"GOOG"}, Limit: 1}) {
		if err != nil {
			t.Fatalf("GET /v1/eod: %v", err)
		}
		eod = r
		break
	}
	if eod.Symbol != "GOOG" {
		t.Fatalf("GET /v1/eod returned %+v", eod)
	}
	if status, _, body := s.get(s.gateway+"/v2/eod?access_key="+marketdataKey+"&symbols=GOOG&limit=1", nil); status != http.StatusOK || !strings.Contains(body, `"symbol":"GOOG"`) {
		t.Fatalf("GET /v2/eod: %d %s", status, body)
	}
	t.Logf("marketdata-svc: GOOG %s close %v (v1 and v2)", eod.Date.Format(time.DateOnly), eod.Close)

	t.Run("routing", func(t *testing.T) {
		// Every exact path of the HTTPRoute (deploy/gateway/routes.conf)
		// reaches its service: the answer is the service's (below 500),
		// never the gateway's own 404.
		routes := gatewayRoutes(t)
		if len(routes) < 19 {
			t.Fatalf("only %d routed paths in deploy/gateway/routes.conf", len(routes))
		}
		for _, r := range routes {
			url, h := s.gateway+r.path, http.Header{}
			if r.upstream == "notes-svc" {
				h.Set("Authorization", "Bearer "+notesKey)
			} else {
				url += "?access_key=" + marketdataKey + "&symbols=GOOG&limit=1"
			}
			if status, _, body := s.get(url, h); status == 0 || status >= 500 || strings.Contains(body, "no API at this path") {
				t.Errorf("GET %s through the gateway: %d %s", r.path, status, body)
			}
		}
		// What the HTTPRoute leaves out stays internal.
		for _, path := range []string{"/healthz", "/readyz", "/metrics", "/v1/openapi.json", "/v1/notesX"} {
			if status, _, _ := s.get(s.gateway+path, nil); status != http.StatusNotFound {
				t.Errorf("GET %s through the gateway: %d, want 404 (not routed)", path, status)
			}
		}
		// The body limit is the gateway's.
		h := http.Header{"Authorization": {"Bearer " + notesKey}, "Content-Type": {"application/json"}}
		if status, _, body := s.do(http.MethodPost, s.gateway+"/v1/notes", h, []byte(strings.Repeat("x", 1<<20+1))); status != http.StatusRequestEntityTooLarge {
			t.Errorf("POST of 1 MiB + 1 byte: %d, want 413 from the gateway: %.200s", status, body)
		}
		t.Logf("routing: all %d paths answered by their service, internal paths 404, a body over 1 MiB 413", len(routes))
	})

	t.Run("client address through the gateway", func(t *testing.T) {
		rid := "smoke-ip-" + run
		status, _, body := s.get(s.gateway+"/v1/notes/"+note.ID, http.Header{
			"Authorization": {"Bearer " + notesKey}, "X-Request-Id": {rid}, "X-Forwarded-For": {spoofed}})
		if status != http.StatusOK {
			t.Fatalf("GET /v1/notes/%s with X-Forwarded-For: %d %s", note.ID, status, body)
		}
		gw := eventually(t, func() []string { return s.logLines([]string{"gateway"}, `"request_id":"`+rid+`"`) })
		svc := eventually(t, func() []string {
			return s.logLines([]string{"notes-svc-1", "notes-svc-2"}, `"request_id":"`+rid+`"`, `"msg":"request"`)
		})
		seen, logged := clientIP(t, gw), clientIP(t, svc)
		if logged != seen {
			t.Errorf("notes-svc logged client_ip %s, the gateway saw %s", logged, seen)
		}
		// The Docker host's address on the stack's network (compose.yaml
		// fixes it): what the gateway sees for a caller of the published port.
		if seen != s.prefix+".1" {
			t.Errorf("the gateway saw %s, want the Docker host's address on the network, %s.1", seen, s.prefix)
		}
		t.Logf("the gateway saw %s (the Docker host), notes-svc logged %s (forged %s ignored)", seen, logged, spoofed)
	})

	t.Run("forged X-Forwarded-For sent to a replica directly", func(t *testing.T) {
		// From a container on the stack's network that is not the gateway.
		network := strings.Fields(inspect(t, "{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}", s.container("gateway")))[0]
		rid := "smoke-direct-" + run
		out, err := exec.Command("docker", "run", "--rm", "--network", network, "--entrypoint", "sh", s.gatewayImage, "-c",
			`hostname -i; curl -sS -o /dev/null -w "%{http_code}\n" -H "X-Forwarded-For: $1" -H "X-Request-Id: $2" -H "Authorization: Bearer $3" "http://notes-svc-1:8080/v1/notes/$4"`,
			"sh", spoofed, rid, notesKey, note.ID).Output()
		if err != nil {
			t.Fatalf("the direct call to notes-svc-1 failed: %v (%s)", err, out)
		}
		lines := strings.Fields(string(out))
		if len(lines) < 2 || lines[len(lines)-1] != "200" {
			t.Fatalf("direct GET on notes-svc-1: %q", out)
		}
		caller := lines[0]
		logged := clientIP(t, eventually(t, func() []string {
			return s.logLines([]string{"notes-svc-1"}, `"request_id":"`+rid+`"`, `"msg":"request"`)
		}))
		if logged != caller {
			t.Errorf("notes-svc-1 logged client_ip %s for a direct call from %s with X-Forwarded-For %s", logged, caller, spoofed)
		}
		t.Logf("a direct call from %s forging %s is logged as %s", caller, spoofed, logged)
	})

	quota := envInt(t, "SMOKE_QUOTA", 5)
	const extra = 3
	var answered, refused int
	t.Run("quota across two replicas", func(t *testing.T) {
		key := s.newKey("marketdata-svc-2", "/marketdata-svc", "--monthly-quota", fmt.Sprint(quota))
		limited, err := marketdataclient.New(s.gateway, marketdataclient.WithAccessKey(key), marketdataclient.WithHTTPClient(hc), marketdataclient.WithRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		prefix := "smoke-quota-" + run + "-"
		for i := range quota + extra {
			qctx, _ := tagged(ctx, fmt.Sprint(prefix, i))
			for _, err := range limited.EOD(qctx, marketdataclient.EODParams{Symbols: []string{"GOOG"}, Limit: 1}) {
				var apiErr *marketdataclient.Error
				switch {
				case err == nil:
					answered++
				case errors.As(err, &apiErr) && apiErr.Status == http.StatusTooManyRequests && apiErr.Code == "usage_limit_reached":
					refused++
				default:
					t.Errorf("quota call %d: %v", i, err)
				}
				break
			}
		}
		upstreams := map[string]bool{}
		for _, l := range s.logLines([]string{"gateway"}, `"request_id":"`+prefix) {
			var g struct{ Upstream string }
			if json.Unmarshal([]byte(l), &g) == nil {
				upstreams[g.Upstream] = true
			}
		}
		if answered != quota || refused != extra {
			t.Errorf("quota %d: %d answered, %d refused with 429 usage_limit_reached; want %d, %d", quota, answered, refused, quota, extra)
		}
		if len(upstreams) < 2 {
			t.Errorf("the quota calls reached one replica only (%v)", upstreams)
		}
		t.Logf("%d calls with a quota of %d: %d answered, %d 429 usage_limit_reached, across %v", quota+extra, quota, answered, refused, upstreams)
	})

	t.Run("SIGTERM under load", func(t *testing.T) {
		r := sigtermUnderLoad(t, s, notesKey, note.ID, time.Duration(envInt(t, "SMOKE_LOAD_SECONDS", 8))*time.Second)
		if path := os.Getenv("SMOKE_REPORT"); path != "" {
			report := fmt.Sprintf("load_seconds=%d\nrequests_sent=%d\nrequests_lost=%d\nquota=%d\nquota_calls=%d\nquota_answered=%d\nquota_refused=%d\nanswered_by_stopped_replica=%d\nretried=%d\nexit_after_sigterm_s=%.1f\n",
				int(r.load.Seconds()), r.sent, r.lost, quota, quota+extra, answered, refused, r.toVictim, r.retried, r.exited.Seconds())
			if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
				t.Errorf("SMOKE_REPORT: %v", err)
			}
		}
	})
	t.Logf("done in %s", time.Since(start).Round(time.Second))
}

// loadResult is what the SIGTERM check measured.
type loadResult struct {
	load              time.Duration
	sent, lost        int64
	toVictim, retried int
	exited            time.Duration
}

// sigtermUnderLoad reads the note from 8 workers through the gateway for
// load, stops notes-svc-1 with SIGTERM 2 s in, and checks that no request
// was lost: every answer 2xx, no transport error.
func sigtermUnderLoad(t *testing.T, s *stack, key, id string, load time.Duration) loadResult {
	// The container id first: compose itself can take seconds to answer.
	victim := s.container("notes-svc-1")
	// A client of its own, with wrk's 5 s timeout and without retries.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: s.client.Transport}
	notes, err := notesclient.New(s.gateway, notesclient.WithAPIKey(key), notesclient.WithHTTPClient(hc), notesclient.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	r := loadResult{load: load}
	var sent, lost atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	stop := time.Now().Add(load)
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				sent.Add(1)
				if _, err := notes.Get(context.Background(), id); err != nil {
					lost.Add(1)
					firstErr.Do(func() { t.Logf("first lost request: %v", err) })
				}
			}
		})
	}
	time.Sleep(2 * time.Second)
	killed := time.Now()
	if out, err := exec.Command("docker", "kill", "-s", "TERM", victim).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v %s", err, out)
	}
	wg.Wait()
	r.sent, r.lost = sent.Load(), lost.Load()

	// The drain (NOTES_SHUTDOWN_DRAIN) and the shutdown end with the
	// process; its log is buffered until then (pkg/flushwriter).
	wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exec.CommandContext(wctx, "docker", "wait", victim).Run(); err != nil {
		t.Fatalf("notes-svc-1 still running 30s after SIGTERM: %v", err)
	}
	finished, err := time.Parse(time.RFC3339Nano, inspect(t, "{{.State.FinishedAt}}", victim))
	if err != nil {
		t.Fatal(err)
	}
	r.exited = finished.Sub(killed)
	state := inspect(t, "{{.State.Status}}, exit code {{.State.ExitCode}}", victim)
	logs := s.must("logs", "--no-color", "notes-svc-1")
	if !strings.Contains(logs, `"msg":"shutting down: readiness now fails"`) {
		t.Errorf("notes-svc-1 logged no drain after SIGTERM (state: %s)", state)
	}
	if !strings.Contains(logs, `"msg":"stopped"`) {
		t.Errorf("notes-svc-1 exited without a clean stop (state: %s)", state)
	}
	for _, l := range s.logLines([]string{"gateway"}, `"path":"/v1/notes/`+id+`"`) {
		if strings.Contains(l, `"upstream":"`+s.prefix+`.11:8080"`) {
			r.toVictim++
		}
		if regexp.MustCompile(`"upstream":"[^"]*, `).MatchString(l) {
			r.retried++
		}
	}
	if r.toVictim == 0 {
		t.Errorf("no load request reached notes-svc-1 before SIGTERM")
	}
	if r.sent == 0 {
		t.Fatal("the load sent no request")
	}
	if r.lost != 0 {
		t.Errorf("SIGTERM under load: %d of %d requests lost", r.lost, r.sent)
	}
	t.Logf("SIGTERM to notes-svc-1 after 2s of a %s load: %d requests, %d lost; %d answered by notes-svc-1, %d retried on notes-svc-2 (notes-svc-1: %s %.1fs after SIGTERM)",
		load, r.sent, r.lost, r.toVictim, r.retried, state, r.exited.Seconds())
	return r
}

// inspect is docker inspect's answer for the template.
func inspect(t *testing.T, format, container string) string {
	t.Helper()
	out, err := exec.Command("docker", "inspect", "-f", format, container).Output()
	if err != nil {
		t.Fatalf("docker inspect %s: %v", container, err)
	}
	return strings.TrimSpace(string(out))
}

// eventually returns the last of the lines find returns, waiting up to
// 10 s for one: a service's log reaches compose after a flush.
func eventually(t *testing.T, find func() []string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if lines := find(); len(lines) > 0 {
			return lines[len(lines)-1]
		}
		if time.Now().After(deadline) {
			t.Fatal("no such log line within 10s")
		}
	}
}

// route is one exact path of the gateway and the upstream it names.
type route struct{ path, upstream string }

// gatewayRoutes reads the exact-match locations of
// deploy/gateway/routes.conf and their proxy_pass upstreams.
func gatewayRoutes(t *testing.T) []route {
	f, err := os.Open("../../gateway/routes.conf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var routes []route
	path := ""
	for sc := bufio.NewScanner(f); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 3 && fields[0] == "location" && fields[1] == "=":
			path = fields[2]
		case len(fields) >= 2 && fields[0] == "proxy_pass" && path != "":
			routes = append(routes, route{path, strings.TrimSuffix(strings.TrimPrefix(fields[1], "http://"), ";")})
			path = ""
		}
	}
	return routes
}

// checkAdmin checks that the admin API is out of the gateway's reach and
// served on loopback only: /admin/v1/accounts through the gateway is a 404
// for both services' prefixes, and each service's published admin port
// answers 401 without a token and 201 (an account created) with the
// stack's generated one.
func checkAdmin(t *testing.T, s *stack) {
	t.Helper()
	for _, path := range []string{"/admin/v1/accounts", "/v1/admin/v1/accounts", "/admin/v1/openapi.json"} {
		if status, _, _ := s.do(http.MethodPost, s.gateway+path, http.Header{"Content-Type": {"application/json"}}, []byte(`{"name":"x"}`)); status != http.StatusNotFound {
			t.Fatalf("POST %s through the gateway: %d, want 404", path, status)
		}
	}
	token := s.adminToken()
	for _, a := range []struct{ service, port string }{{"notes-svc-1", "9090"}, {"marketdata-svc-1", "9091"}} {
		base := s.adminURL(a.service, a.port)
		body := []byte(`{"name":"smoke-admin"}`)
		if status, _, _ := s.do(http.MethodPost, base+"/admin/v1/accounts", http.Header{"Content-Type": {"application/json"}}, body); status != http.StatusUnauthorized {
			t.Fatalf("%s admin API without a token: %d, want 401", a.service, status)
		}
		h := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + token}}
		status, _, resp := s.do(http.MethodPost, base+"/admin/v1/accounts", h, body)
		if status != http.StatusCreated || !strings.Contains(resp, `"name":"smoke-admin"`) {
			t.Fatalf("%s admin API with the token: %d %s, want 201 and the account", a.service, status, resp)
		}
		t.Logf("%s: admin API on %s (loopback only): 401 without a token, 201 with it; 404 through the gateway", a.service, base)
	}
}
