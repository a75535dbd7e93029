package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tickerdesk/tickerdesk/resilience/internal/harness"
	"github.com/tickerdesk/tickerdesk/resilience/internal/load"
)

// RevocationBound is marketdata-svc's documented bound on a revocation
// made through the admin API (docs/ADMIN.md): the key is announced on
// Redis pub/sub and every replica drops it from its 30 s key cache.
const RevocationBound = time.Second

// adminRolls is how many times the hostile table rolls one key.
const adminRolls = 10_000

// adminEnv is the admin side of the suite: a notes-svc and three
// marketdata-svc replicas on the suite's databases, the first of each
// with its admin listener.
type adminEnv struct {
	e      *Env
	token  string
	notes  *harness.Service
	market []*harness.Service
	// notesAdmin and marketAdmin are the admin listeners' addresses.
	notesAdmin, marketAdmin string
	client                  *http.Client
}

// Admin runs the admin API's scenarios: a revocation under load on three
// marketdata-svc replicas, five times, measuring the time to the first
// 401 and to the last success, and the hostile inputs of the admin API on
// both services, counting what each did and checking that none left a
// half-made key.
func Admin(ctx context.Context, e *Env) {
	a, err := startAdmin(ctx, e)
	defer a.stop()
	if err != nil {
		e.Report.Error("admin scenarios: %v", err)
		return
	}
	a.hostile(ctx, e.Notes.Name, a.notes, a.notesAdmin, e.NotesKeyA)
	a.hostile(ctx, e.Market.Name, a.market[0], a.marketAdmin, e.MarketKey)
	a.revocation(ctx)
}

// startAdmin writes an admin token file and starts the admin processes.
// They log to the services' own logs, so the secret scan reads them.
func startAdmin(ctx context.Context, e *Env) (*adminEnv, error) {
	a := &adminEnv{e: e, token: Marker("ADMINTOKEN") + Marker("x"), client: load.NewClient(RequestTimeout+5*time.Second, true)}
	e.Secret(a.token, "admin token")
	tokens := filepath.Join(filepath.Dir(e.Notes.LogPath), "admin-tokens")
	if err := os.WriteFile(tokens, []byte("faults:"+a.token+"\n"), 0o600); err != nil {
		return a, fmt.Errorf("admin token file: %w", err)
	}
	clone := func(svc *harness.Service, prefix string, admin bool) (*harness.Service, string, error) {
		env := maps.Clone(svc.Env)
		// The default cache: only the announcement makes a revocation
		// bite before it ends.
		env[prefix+"KEY_CACHE_TTL"] = "30s"
		out, err := harness.NewService(svc.Name, svc.Bin, svc.LogPath, env)
		if err != nil {
			return nil, "", err
		}
		env[prefix+"HTTP_ADDR"] = out.Addr
		var adminAddr string
		if admin {
			if adminAddr, err = harness.FreeAddr(); err != nil {
				return nil, "", err
			}
			env[prefix+"ADMIN_ADDR"] = adminAddr
			env[prefix+"ADMIN_TOKEN_FILE"] = tokens
		}
		if err := out.Start(ctx, nil); err != nil {
			return nil, "", err
		}
		return out, adminAddr, nil
	}
	var err error
	if a.notes, a.notesAdmin, err = clone(e.Notes, "NOTES_", true); err != nil {
		return a, err
	}
	for i := range 3 {
		r, addr, err := clone(e.Market, "MARKETDATA_", i == 0)
		if err != nil {
			return a, err
		}
		a.market = append(a.market, r)
		if i == 0 {
			a.marketAdmin = addr
		}
	}
	return a, nil
}

func (a *adminEnv) stop() {
	for _, s := range append([]*harness.Service{a.notes}, a.market...) {
		if s != nil {
			if err := s.Stop(ShutdownDrain + ShutdownTimeout + 5*time.Second); err != nil {
				a.e.Report.Error("stop admin %s: %v", s.Name, err)
			}
		}
	}
}

// call sends a request to the admin listener at addr with the admin
// token (or token, when not empty; "-" for none).
func (a *adminEnv) call(addr, method, path, token, body string) (Response, error) {
	req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	switch token {
	case "":
		req.Header.Set("Authorization", "Bearer "+a.token)
	case "-":
	default:
		req.Header.Set("Authorization", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := a.client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: answer, Dur: time.Since(start)}, err
}

// adminJSON calls the admin API and decodes a 2xx answer into out.
func (a *adminEnv) adminJSON(addr, method, path, body string, want int, out any) error {
	r, err := a.call(addr, method, path, "", body)
	if err != nil {
		return err
	}
	if r.Status != want {
		return fmt.Errorf("%s %s: status %d, want %d: %.300s", method, path, r.Status, want, r.Body)
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

type adminKey struct {
	ID        string     `json:"id"`
	Hint      string     `json:"hint"`
	Scopes    []string   `json:"scopes"`
	Secret    string     `json:"secret"`
	ExpiresAt *time.Time `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// auditRows reads the whole audit trail at addr.
func (a *adminEnv) auditRows(addr string) ([]struct{ Action, AccountID string }, error) {
	var all []struct{ Action, AccountID string }
	after := int64(0)
	for {
		var page struct {
			Data []struct {
				Action    string `json:"action"`
				AccountID string `json:"account_id"`
			} `json:"data"`
			NextAfter int64 `json:"next_after"`
		}
		if err := a.adminJSON(addr, http.MethodGet, fmt.Sprintf("/admin/v1/audit?after=%d&limit=500", after), "", http.StatusOK, &page); err != nil {
			return nil, err
		}
		for _, r := range page.Data {
			all = append(all, struct{ Action, AccountID string }{r.Action, r.AccountID})
		}
		if len(page.Data) == 0 {
			return all, nil
		}
		after = page.NextAfter
	}
}

// adminCase is one hostile input: a request and the status it must get.
type adminCase struct {
	class        string
	method, path string
	// token is "" for the admin token, "-" for none, or a whole
	// Authorization header; public sends the request to the public port.
	token, body string
	public      bool
	want        int
}

// hostile sends the admin hostile inputs to svc (whose admin listener is
// at adminAddr; key is one of its API keys), then rolls one key
// adminRolls times, and checks the keys and the audit trail afterwards
// hold exactly what the accepted requests made.
func (a *adminEnv) hostile(ctx context.Context, name string, svc *harness.Service, adminAddr, key string) {
	s := a.e.Report.Scenario("Admin API hostile inputs (" + name + ")")
	before, err := a.auditRows(adminAddr)
	if err != nil {
		s.Check("audit trail readable", false, "%v", err)
		return
	}
	var acct struct{ ID string }
	if err := a.adminJSON(adminAddr, http.MethodPost, "/admin/v1/accounts", fmt.Sprintf(`{"name":%q}`, Marker("faults-admin")), http.StatusCreated, &acct); err != nil {
		s.Check("account created", false, "%v", err)
		return
	}
	scope, otherScopes := "eod", `"scopes":["eod"]`
	if name == a.e.Notes.Name {
		scope, otherScopes = "notes:read", `"scopes":["notes:read","notes:write"]`
	}
	var root adminKey
	if err := a.adminJSON(adminAddr, http.MethodPost, "/admin/v1/accounts/"+acct.ID+"/keys", `{`+otherScopes+`,"name":"rolled"}`, http.StatusCreated, &root); err != nil {
		s.Check("key created", false, "%v", err)
		return
	}
	a.e.Secret(root.Secret, name+" admin-issued key")
	keys := "/admin/v1/accounts/" + acct.ID + "/keys"
	publicPath := "/v1/notes"
	if name == a.e.Market.Name {
		publicPath = "/v1/eod/latest?symbols=GOOG&access_key=" + a.token
	}
	const (
		tokenPublic = "admin: the admin token on the public port"
		keyAdmin    = "admin: an API key or no token on the admin port"
		forged      = "admin: a forged, malformed or oversized body"
		scopeClass  = "admin: an unknown scope"
		expiry      = "admin: an expiry in the past or unparseable"
		rollsClass  = "admin: 10,000 rolls of one key"
	)
	cases := []adminCase{
		{class: tokenPublic, method: http.MethodGet, path: publicPath, token: "Bearer " + a.token, public: true, want: 401},
		{class: tokenPublic, method: http.MethodGet, path: "/admin/v1/audit", token: "Bearer " + a.token, public: true, want: 404},
		{class: keyAdmin, method: http.MethodGet, path: "/admin/v1/audit", token: "Bearer " + key, want: 401},
		{class: keyAdmin, method: http.MethodPost, path: keys, token: "Bearer " + key, body: `{` + otherScopes + `}`, want: 401},
		{class: keyAdmin, method: http.MethodPost, path: "/admin/v1/keys/" + root.ID + "/roll", token: "Bearer " + root.Secret, want: 401},
		{class: keyAdmin, method: http.MethodDelete, path: "/admin/v1/keys/" + root.ID, token: "-", want: 401},
		{class: keyAdmin, method: http.MethodPost, path: "/admin/v1/accounts", token: "Basic " + a.token, body: `{"name":"basic"}`, want: 401},
		{class: keyAdmin, method: http.MethodPost, path: "/admin/v1/accounts", token: "Bearer " + a.token[:len(a.token)-1] + "X", body: `{"name":"near"}`, want: 401},
		{class: forged, method: http.MethodPost, path: "/admin/v1/accounts", body: `{"name":"forged","id":"acct_forged"}`, want: 400},
		{class: forged, method: http.MethodPost, path: keys, body: `{` + otherScopes + `,"secret":"` + key + `"}`, want: 400},
		{class: forged, method: http.MethodPost, path: keys, body: `{` + otherScopes + `,"hash":"00","account_id":"other"}`, want: 400},
		{class: forged, method: http.MethodPost, path: keys, body: `{` + otherScopes + `,"revoked_at":null}`, want: 400},
		{class: forged, method: http.MethodPost, path: keys, body: `{"scopes":"eod"}`, want: 400},
		{class: forged, method: http.MethodPost, path: keys, body: `{` + otherScopes + `}{"name":"second"}`, want: 400},
		{class: forged, method: http.MethodPost, path: keys, body: `{"scopes":[`, want: 400},
		{class: forged, method: http.MethodPost, path: keys, body: `[]`, want: 400},
		{class: forged, method: http.MethodPost, path: "/admin/v1/accounts", body: `{"name":5}`, want: 400},
		{class: forged, method: http.MethodPost, path: "/admin/v1/accounts", body: `{"name":"line\nbreak"}`, want: 422},
		{class: forged, method: http.MethodPost, path: keys, body: `{` + otherScopes + `,"name":"` + strings.Repeat("n", 17<<10) + `"}`, want: 413},
		{class: forged, method: http.MethodPost, path: "/admin/v1/accounts", body: `{"name":"` + strings.Repeat("a", 1<<20) + `"}`, want: 413},
		{class: forged, method: http.MethodPost, path: "/admin/v1/accounts/not-an-account/keys", body: `{` + otherScopes + `}`, want: 404},
		{class: forged, method: http.MethodDelete, path: "/admin/v1/keys/%27%20OR%20%271%27=%271", want: 404},
		{class: scopeClass, method: http.MethodPost, path: keys, body: `{"scopes":["admin"]}`, want: 422},
		{class: scopeClass, method: http.MethodPost, path: keys, body: `{"scopes":["` + scope + `","root"]}`, want: 422},
		{class: scopeClass, method: http.MethodPost, path: keys, body: `{"scopes":[]}`, want: 422},
		{class: scopeClass, method: http.MethodPost, path: keys, body: `{"scopes":["` + strings.ToUpper(scope) + `"]}`, want: 422},
		{class: expiry, method: http.MethodPost, path: keys, body: `{` + otherScopes + `,"expires_at":"2001-01-01T00:00:00Z"}`, want: 422},
		{class: expiry, method: http.MethodPost, path: keys, body: `{` + otherScopes + `,"expires_at":"tomorrow"}`, want: 422},
		{class: expiry, method: http.MethodPost, path: keys, body: `{` + otherScopes + `,"expires_at":"2030-13-45T00:00:00Z"}`, want: 422},
		{class: expiry, method: http.MethodPost, path: keys, body: `{` + otherScopes + `,"expires_at":""}`, want: 422},
		{class: expiry, method: http.MethodPost, path: keys, body: `{` + otherScopes + `,"expires_at":"9999-12-31T23:59:59Z"}`, want: 422},
		{class: expiry, method: http.MethodPost, path: "/admin/v1/keys/" + root.ID + "/roll", body: `{"expires_in":"-1h"}`, want: 422},
		{class: expiry, method: http.MethodPost, path: "/admin/v1/keys/" + root.ID + "/roll", body: `{"expires_in":"forever"}`, want: 422},
		{class: expiry, method: http.MethodPost, path: "/admin/v1/keys/" + root.ID + "/roll", body: `{"expires_in":"100000h"}`, want: 422},
	}
	counts := map[string]int{}
	for _, c := range cases {
		addr := adminAddr
		if c.public {
			addr = svc.Addr
		}
		r, err := a.call(addr, c.method, c.path, c.token, c.body)
		failure := ""
		switch {
		case err != nil:
			failure = fmt.Sprintf("%s %.80s: %v", c.method, c.path, err)
			counts["no answer"]++
		default:
			counts[outcomeOf(r.Status)]++
			format := "notes-svc" // the admin API answers in problem+json on both services
			if c.public {
				format = name
			}
			if r.Status != c.want || !documentedError(format, r.Status, r.Header, r.Body) {
				failure = fmt.Sprintf("%s %.80s: status %d (want %d): %.160s", c.method, c.path, r.Status, c.want, r.Body)
			}
		}
		a.e.Report.HostileResult(c.class+" ("+name+")", r.Status, failure)
		s.Check(c.class+": "+c.method+" "+trim(c.path)+" answers "+fmt.Sprint(c.want), failure == "", "%s", orOK(failure))
	}
	s.Sent = len(cases)

	// Rolls of one key, four at a time: the live-key cap stops them, and
	// concurrent rolls must not outrun it.
	var rolled, refused, busy, fiveXX, other atomic.Int64
	var example atomic.Value
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for next.Add(1) <= adminRolls && ctx.Err() == nil {
				r, err := a.call(adminAddr, http.MethodPost, "/admin/v1/keys/"+root.ID+"/roll", "", `{"expires_in":"24h"}`)
				switch {
				case err != nil:
					other.Add(1)
					example.Store(err.Error())
				case r.Status == http.StatusCreated:
					rolled.Add(1)
				case r.Status == http.StatusConflict && documentedError("notes-svc", r.Status, r.Header, r.Body):
					refused.Add(1)
				case r.Status == http.StatusServiceUnavailable && r.Header.Get("Retry-After") != "" &&
					documentedError("notes-svc", r.Status, r.Header, r.Body):
					// Rolls of one key queue on its row lock; a wait past
					// the statement timeout is the documented 503.
					busy.Add(1)
				case r.Status >= 500:
					fiveXX.Add(1)
					example.Store(fmt.Sprintf("status %d: %.160s", r.Status, r.Body))
				default:
					other.Add(1)
					example.Store(fmt.Sprintf("status %d: %.160s", r.Status, r.Body))
				}
			}
		})
	}
	wg.Wait()
	s.Sent += adminRolls
	ex, _ := example.Load().(string)
	for range rolled.Load() + refused.Load() {
		a.e.Report.HostileResult(rollsClass+" ("+name+")", 201, "")
	}
	for range busy.Load() {
		a.e.Report.HostileResult(rollsClass+" ("+name+")", 503, "")
	}
	for range fiveXX.Load() {
		a.e.Report.HostileResult(rollsClass+" ("+name+")", 500, ex)
	}
	for range other.Load() {
		a.e.Report.HostileResult(rollsClass+" ("+name+")", 0, ex)
	}
	s.Check(rollsClass+": each accepted (201), refused by the live-key cap (409) or a documented 503 (busy), never a 500",
		rolled.Load()+refused.Load()+busy.Load() == adminRolls && rolled.Load() > 0,
		"%d rolled, %d refused 409, %d 503 with Retry-After (a wait on the key's row lock past the %s statement timeout), %d other 5xx, %d other%s",
		rolled.Load(), refused.Load(), busy.Load(), StatementTimeout, fiveXX.Load(), other.Load(), suffix(ex))
	counts["2xx"] += int(rolled.Load())
	counts["4xx"] += int(refused.Load() + other.Load())
	counts["503"] += int(busy.Load())
	counts["5xx"] += int(fiveXX.Load())

	// No half-made key: the account holds the first key and one per
	// accepted roll, each whole, at most 100 of them live; the audit
	// trail grew by exactly those changes.
	var list struct{ Data []adminKey }
	err = a.adminJSON(adminAddr, http.MethodGet, keys, "", http.StatusOK, &list)
	live, whole := 0, 0
	for _, k := range list.Data {
		if k.RevokedAt == nil && (k.ExpiresAt == nil || k.ExpiresAt.After(time.Now())) {
			live++
		}
		if k.ID != "" && k.Hint != "" && len(k.Scopes) > 0 && k.Secret == "" {
			whole++
		}
	}
	s.Check("no half-made key: the account holds its key and one per accepted roll, each whole", err == nil &&
		len(list.Data) == 1+int(rolled.Load()) && whole == len(list.Data) && live <= 100,
		"%d keys listed (%d whole, %d live; cap 100) for 1 created and %d rolled%s", len(list.Data), whole, live, rolled.Load(), suffix(errString(err)))
	after, err := a.auditRows(adminAddr)
	added := map[string]int{}
	if err == nil && len(after) >= len(before) {
		for _, r := range after[len(before):] {
			added[r.Action]++
		}
	}
	want := map[string]int{"account.create": 1, "key.create": 1, "key.roll": int(rolled.Load())}
	s.Check("the audit trail grew by the accepted changes only", err == nil && maps.Equal(added, want),
		"added %v, want %v%s", added, want, suffix(errString(err)))
	s.Outcomes = fmt.Sprintf("%d refused as documented (4xx), %d accepted (2xx), %d documented 503 (busy), %d other 5xx, %d without an answer",
		counts["4xx"], counts["2xx"], counts["503"], counts["5xx"], counts["no answer"])
	s.Failed = counts["5xx"] + counts["no answer"]
	for _, c := range s.Checks {
		if !c.OK {
			s.Failed++
		}
	}
}

func outcomeOf(status int) string {
	switch {
	case status >= 500:
		return "5xx"
	case status >= 400:
		return "4xx"
	}
	return "2xx"
}

func trim(path string) string {
	if len(path) > 60 {
		return path[:60] + "…"
	}
	return path
}

func orOK(failure string) string {
	if failure == "" {
		return "as documented"
	}
	return failure
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return "; " + s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// revocationRun is what one revocation under load showed.
type revocationRun struct {
	// first is the time from the admin call being sent to the first 401
	// of the last replica to refuse the key; last, from the call's answer
	// to the start of the last request the key succeeded with (negative:
	// none started after the answer).
	first, last time.Duration
	// afterAnswer counts successes started after the answer, afterRefusal
	// those started on a replica after its first 401, unrefused the
	// replicas that never refused the key, odd the answers neither 200
	// nor 401.
	afterAnswer, afterRefusal, unrefused, odd, sent int
}

// revocation revokes a key under load on the three marketdata-svc
// replicas, five times.
func (a *adminEnv) revocation(ctx context.Context) {
	s := a.e.Report.Scenario("Key revocation under load on 3 marketdata-svc replicas (admin API, Redis pub/sub), 5 runs")
	var acct struct{ ID string }
	if err := a.adminJSON(a.marketAdmin, http.MethodPost, "/admin/v1/accounts", fmt.Sprintf(`{"name":%q}`, Marker("faults-revoke")), http.StatusCreated, &acct); err != nil {
		s.Check("account created", false, "%v", err)
		return
	}
	var runs []revocationRun
	for run := range 5 {
		if ctx.Err() != nil {
			break
		}
		var k adminKey
		if err := a.adminJSON(a.marketAdmin, http.MethodPost, "/admin/v1/accounts/"+acct.ID+"/keys", `{"scopes":["eod"]}`, http.StatusCreated, &k); err != nil {
			s.Check(fmt.Sprintf("run %d: key created", run), false, "%v", err)
			return
		}
		a.e.Secret(k.Secret, "marketdata admin-issued key")
		m, err := a.revokeUnderLoad(k)
		if err != nil {
			s.Check(fmt.Sprintf("run %d", run), false, "%v", err)
			return
		}
		runs = append(runs, m)
	}
	if len(runs) == 0 {
		return
	}
	firsts, lasts := make([]time.Duration, len(runs)), make([]time.Duration, len(runs))
	var afterAnswer, afterRefusal, unrefused, odd int
	for i, m := range runs {
		firsts[i], lasts[i] = m.first, m.last
		afterAnswer += m.afterAnswer
		afterRefusal += m.afterRefusal
		unrefused += m.unrefused
		odd += m.odd
		s.Sent += m.sent
	}
	list := func(ds []time.Duration) string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = ms(d)
		}
		return strings.Join(out, ", ")
	}
	detail := fmt.Sprintf("first 401: %s; last success (from the answer): %s", list(firsts), list(lasts))
	slices.Sort(firsts)
	slices.Sort(lasts)
	p50 := func(ds []time.Duration) time.Duration { return ds[(len(ds)-1)/2] }
	s.Recovery = fmt.Sprintf("first 401 on the last replica p50 %s, worst %s after the call; last success started p50 %s, worst %s after its answer",
		ms(p50(firsts)), ms(firsts[len(firsts)-1]), ms(p50(lasts)), ms(lasts[len(lasts)-1]))
	s.Outcomes = fmt.Sprintf("%d requests with the revoked keys; %d successes started after the answer, %d after a replica's first 401", s.Sent, afterAnswer, afterRefusal)
	s.Check("5 runs", len(runs) == 5, "%d runs", len(runs))
	s.Check("every replica refuses the key within the bound (1 s)", unrefused == 0 && firsts[len(firsts)-1] <= RevocationBound,
		"%d replica-runs never refused it; worst first 401 %s (%s)", unrefused, ms(firsts[len(firsts)-1]), detail)
	s.Check("no success starts later than the bound after the answer", lasts[len(lasts)-1] <= RevocationBound,
		"worst %s; %d successes started after the answer, within the bound (pub/sub reaching the other replicas)", ms(lasts[len(lasts)-1]), afterAnswer)
	s.Check("a replica that refused the key never accepts it again", afterRefusal == 0, "%d successes after a replica's first 401", afterRefusal)
	s.Check("every answer is 200 or 401", odd == 0, "%d other answers", odd)
	s.Failed = unrefused + afterRefusal + odd
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// revokeUnderLoad calls with key k on every replica from two clients
// each, revokes it through the admin API, keeps calling until 2 s after
// the answer (twice the bound) and measures.
func (a *adminEnv) revokeUnderLoad(k adminKey) (revocationRun, error) {
	type call struct {
		start, end time.Time
		status     int
	}
	const clients = 2
	get := func(c *http.Client, r *harness.Service) call {
		out := call{start: time.Now()}
		res := load.Do(c, 0, func(int) (*http.Request, error) {
			return http.NewRequest(http.MethodGet, r.URL("/v1/eod/latest?symbols=GOOG&access_key="+k.Secret), nil)
		})
		out.end, out.status = time.Now(), res.Status
		return out
	}
	for _, r := range a.market { // the key cached on every replica
		if c := get(a.client, r); c.status != http.StatusOK {
			return revocationRun{}, fmt.Errorf("a fresh key answered %d on %s", c.status, r.Addr)
		}
	}
	calls := make([][]call, len(a.market)*clients)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range calls {
		r := a.market[i/clients]
		c := load.NewClient(RequestTimeout, true)
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				calls[i] = append(calls[i], get(c, r))
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	sent := time.Now()
	r, err := a.call(a.marketAdmin, http.MethodDelete, "/admin/v1/keys/"+k.ID, "", "")
	answered := time.Now()
	if err == nil && r.Status != http.StatusNoContent {
		err = fmt.Errorf("revoke: status %d: %.200s", r.Status, r.Body)
	}
	time.Sleep(time.Until(answered.Add(2 * RevocationBound)))
	close(stop)
	wg.Wait()
	if err != nil {
		return revocationRun{}, err
	}
	m := revocationRun{last: -time.Hour}
	for ri := range a.market {
		mine := slices.Concat(calls[ri*clients : (ri+1)*clients]...)
		m.sent += len(mine)
		var first time.Time
		for _, c := range mine {
			if c.status != http.StatusOK && c.status != http.StatusUnauthorized {
				m.odd++
			}
			if c.status == http.StatusUnauthorized && (first.IsZero() || c.end.Before(first)) {
				first = c.end
			}
		}
		if first.IsZero() {
			m.unrefused++
			continue
		}
		m.first = max(m.first, first.Sub(sent))
		for _, c := range mine {
			if c.status != http.StatusOK {
				continue
			}
			m.last = max(m.last, c.start.Sub(answered))
			if c.start.After(answered) {
				m.afterAnswer++
			}
			if c.start.After(first) {
				m.afterRefusal++
			}
		}
	}
	return m, nil
}
