// Package suite holds the fault scenarios, the hostile-input table and the
// security checks, all black-box against the running service binaries.
package suite

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tickerdesk/tickerdesk/resilience/internal/harness"
	"github.com/tickerdesk/tickerdesk/resilience/internal/load"
	"github.com/tickerdesk/tickerdesk/resilience/internal/report"
)

// Timeouts the services run with during the suite; the scenarios assert
// against them.
const (
	RequestTimeout   = 3 * time.Second
	StatementTimeout = 2 * time.Second
	ShutdownDrain    = 1 * time.Second
	ShutdownTimeout  = 10 * time.Second
	HTTPReadTimeout  = 3 * time.Second
	DBMaxOpenConns   = 5
)

// Env is what every scenario shares: the stack, the two services, their
// keys, and everything secret the suite sent (for the log scan).
type Env struct {
	Stack  *harness.Stack
	Notes  *harness.Service
	Market *harness.Service
	Report *report.Report
	Logf   func(format string, args ...any)

	NotesDB, MarketDB string

	NotesKeyA, NotesKeyB string
	MarketKey            string

	Client *http.Client

	mu       sync.Mutex
	secrets  map[string]string // value -> what it is
	Contents []string
}

// Config names the binaries and where logs go.
type Config struct {
	BinDir string
	LogDir string
}

// Setup creates fresh databases, migrates, loads the demo data, creates
// keys and starts both services.
func Setup(ctx context.Context, stack *harness.Stack, rep *report.Report, cfg Config, logf func(string, ...any)) (*Env, error) {
	e := &Env{Stack: stack, Report: rep, Logf: logf, NotesDB: "faults_notes", MarketDB: "faults_marketdata",
		secrets: map[string]string{}, Client: load.NewClient(RequestTimeout+5*time.Second, true)}
	for _, db := range []string{e.NotesDB, e.MarketDB} {
		if err := stack.RecreateDatabase(ctx, db); err != nil {
			return nil, err
		}
	}
	if out, err := stack.RedisCLI(ctx, "flushall"); err != nil {
		return nil, fmt.Errorf("redis flushall: %v: %s", err, out)
	}
	notesEnv := tunedEnv("NOTES_", "NOTES_DB_STATEMENT_TIMEOUT")
	notesEnv["NOTES_DATABASE_URL"] = stack.DatabaseURL(e.NotesDB)
	// The per-key rate limit runs on every request but is never reached:
	// the scenarios drive a few keys far harder than a client would.
	notesEnv["NOTES_RATE_LIMIT_PER_SECOND"] = "100000"
	marketEnv := tunedEnv("MARKETDATA_", "MARKETDATA_STATEMENT_TIMEOUT")
	// database/sql's pool keeps every connection idle; notes-svc's pgx
	// pool always does and has no such setting.
	marketEnv["MARKETDATA_DB_MAX_IDLE_CONNS"] = fmt.Sprint(DBMaxOpenConns)
	marketEnv["MARKETDATA_DATABASE_URL"] = stack.DatabaseURL(e.MarketDB)
	marketEnv["MARKETDATA_REDIS_URL"] = stack.RedisURL(0)
	var err error
	if e.Notes, err = newService(cfg, "notes-svc", "NOTES_", notesEnv); err != nil {
		return nil, err
	}
	if e.Market, err = newService(cfg, "marketdata-svc", "MARKETDATA_", marketEnv); err != nil {
		return nil, err
	}

	if _, err := e.Notes.CLI(ctx, "migrate"); err != nil {
		return nil, err
	}
	if _, err := e.Market.CLI(ctx, "migrate"); err != nil {
		return nil, err
	}
	if _, err := e.Market.CLI(ctx, "demo"); err != nil {
		return nil, err
	}
	if e.NotesKeyA, err = e.newKey(ctx, e.Notes, "notes key A", "--account", "faults-a"); err != nil {
		return nil, err
	}
	if e.NotesKeyB, err = e.newKey(ctx, e.Notes, "notes key B", "--account", "faults-b"); err != nil {
		return nil, err
	}
	if e.MarketKey, err = e.newKey(ctx, e.Market, "marketdata load key", "--account", "faults-load", "--rate-per-second", "100000"); err != nil {
		return nil, err
	}
	if err := e.StartAll(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// StartAll starts whichever service is not running.
func (e *Env) StartAll(ctx context.Context) error {
	for _, s := range []*harness.Service{e.Notes, e.Market} {
		if !s.Alive() {
			if err := s.Start(ctx, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// StopAll stops both services gracefully.
func (e *Env) StopAll() {
	for _, s := range []*harness.Service{e.Notes, e.Market} {
		if err := s.Stop(ShutdownDrain + ShutdownTimeout + 5*time.Second); err != nil {
			e.Report.Error("stop %s: %v", s.Name, err)
		}
	}
}

// Secret remembers a value that must never show up in a log.
func (e *Env) Secret(value, what string) {
	e.mu.Lock()
	e.secrets[value] = what
	e.mu.Unlock()
}

// newKey creates a key of svc with the arguments of its keys create
// command and remembers it as the secret what, so that no report quotes
// it.
func (e *Env) newKey(ctx context.Context, svc *harness.Service, what string, args ...string) (string, error) {
	key, err := svc.CreateKey(ctx, args...)
	if err != nil {
		return "", err
	}
	e.Secret(key, what)
	return key, nil
}

// Secrets returns every remembered secret with what it is.
func (e *Env) Secrets() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]string, len(e.secrets))
	for k, v := range e.secrets {
		out[k] = v
	}
	return out
}

// Marker returns a fresh unguessable token; note contents carry one, so
// the log scan can prove no content was logged.
func Marker(kind string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return kind + "-" + hex.EncodeToString(b[:])
}

// NoteContent builds note content that carries a content marker.
func (e *Env) NoteContent(text string) string {
	m := Marker("CONTENTMARK")
	e.Secret(m, "note content")
	return text + " " + m
}

// Response is a fully read HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	Dur    time.Duration
}

// Do sends a request and reads the whole answer.
func (e *Env) Do(req *http.Request) (Response, error) {
	start := time.Now()
	resp, err := e.Client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Dur: time.Since(start)}, err
}

// NotesRequest builds a notes-svc request with the bearer key and JSON
// body; hdr adds or overrides headers.
func (e *Env) NotesRequest(method, path, key string, body []byte, hdr map[string]string) *http.Request {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.Notes.URL(""), rd)
	if err != nil {
		panic(err)
	}
	// The path goes in raw, so hostile paths reach the server unchanged.
	setRawPath(req, path)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return req
}

// setRawPath sets path (with an optional query) on req exactly as given.
// tunedEnv is the configuration both services run with in the suite, under
// their variable prefix: the same timeouts and pool size, which the
// scenarios assert against. Only the statement timeout's name differs.
func tunedEnv(prefix, statementTimeoutVar string) map[string]string {
	return map[string]string{
		prefix + "LOG_LEVEL":         "debug",
		prefix + "SHUTDOWN_DRAIN":    ShutdownDrain.String(),
		prefix + "SHUTDOWN_TIMEOUT":  ShutdownTimeout.String(),
		prefix + "REQUEST_TIMEOUT":   RequestTimeout.String(),
		statementTimeoutVar:          StatementTimeout.String(),
		prefix + "HTTP_READ_TIMEOUT": HTTPReadTimeout.String(),
		prefix + "DB_MAX_OPEN_CONNS": fmt.Sprint(DBMaxOpenConns),
	}
}

// newService prepares binary name of cfg.BinDir with env, listening on the
// free address it was given.
func newService(cfg Config, name, prefix string, env map[string]string) (*harness.Service, error) {
	svc, err := harness.NewService(name, filepath.Join(cfg.BinDir, name), filepath.Join(cfg.LogDir, name+".log"), env)
	if err != nil {
		return nil, err
	}
	svc.Env[prefix+"HTTP_ADDR"] = svc.Addr
	return svc, nil
}

func setRawPath(req *http.Request, pathAndQuery string) {
	p, q, _ := strings.Cut(pathAndQuery, "?")
	req.URL.Path = ""
	req.URL.RawPath = ""
	req.URL.Opaque = p
	req.URL.RawQuery = q
}

// MarketRequest builds a marketdata-svc GET with access_key appended to
// the raw query.
func (e *Env) MarketRequest(method, pathAndQuery, key string) *http.Request {
	req, err := http.NewRequest(method, e.Market.URL(""), nil)
	if err != nil {
		panic(err)
	}
	if key != "" {
		if strings.Contains(pathAndQuery, "?") {
			pathAndQuery += "&access_key=" + key
		} else {
			pathAndQuery += "?access_key=" + key
		}
	}
	setRawPath(req, pathAndQuery)
	return req
}

// Note is the part of a note response the suite checks: no scenario
// reads the timestamps.
type Note struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Content string   `json:"content"`
	Tags    []string `json:"tags"`
}

// CreateNote posts a note for key and returns it with its ETag.
func (e *Env) CreateNote(key, title, content string, tags []string) (Note, string, error) {
	m := map[string]any{"title": title, "content": content}
	if tags != nil {
		m["tags"] = tags
	}
	body, _ := json.Marshal(m)
	resp, err := e.Do(e.NotesRequest(http.MethodPost, "/v1/notes", key, body, nil))
	if err != nil {
		return Note{}, "", err
	}
	if resp.Status != http.StatusCreated {
		return Note{}, "", fmt.Errorf("create note: status %d: %s", resp.Status, resp.Body)
	}
	var n Note
	if err := json.Unmarshal(resp.Body, &n); err != nil {
		return Note{}, "", fmt.Errorf("create note: %w", err)
	}
	return n, resp.Header.Get("ETag"), nil
}

// GetNote fetches a note; the raw body is returned for byte comparisons.
func (e *Env) GetNote(key, id string) (Response, Note, error) {
	resp, err := e.Do(e.NotesRequest(http.MethodGet, "/v1/notes/"+id, key, nil, nil))
	if err != nil {
		return resp, Note{}, err
	}
	var n Note
	if resp.Status == http.StatusOK {
		if err := json.Unmarshal(resp.Body, &n); err != nil {
			return resp, n, fmt.Errorf("get note: %w", err)
		}
	}
	return resp, n, nil
}

// Snapshot is a note's stored state as GET returns it.
type Snapshot struct {
	ID   string
	Body []byte
	ETag string
}

// SnapshotNote records a note for a later byte-exact comparison.
func (e *Env) SnapshotNote(key, id string) (Snapshot, error) {
	resp, _, err := e.GetNote(key, id)
	if err != nil {
		return Snapshot{}, err
	}
	if resp.Status != http.StatusOK {
		return Snapshot{}, fmt.Errorf("snapshot %s: status %d", id, resp.Status)
	}
	return Snapshot{ID: id, Body: resp.Body, ETag: resp.Header.Get("ETag")}, nil
}

// Unchanged reports whether the note still reads byte for byte as in s.
func (e *Env) Unchanged(key string, s Snapshot) (bool, string) {
	resp, _, err := e.GetNote(key, s.ID)
	if err != nil {
		return false, err.Error()
	}
	if resp.Status != http.StatusOK {
		return false, fmt.Sprintf("GET %s: status %d", s.ID, resp.Status)
	}
	if !bytes.Equal(resp.Body, s.Body) || resp.Header.Get("ETag") != s.ETag {
		return false, fmt.Sprintf("note %s changed: was %q, now %q", s.ID, s.Body, resp.Body)
	}
	return true, ""
}

// Metric reads the sum of a Prometheus counter over all its series whose
// labels contain every labelFilter substring.
func (e *Env) Metric(svc *harness.Service, name string, labelFilter ...string) (float64, error) {
	req, _ := http.NewRequest(http.MethodGet, svc.URL("/metrics"), nil)
	resp, err := e.Do(req)
	if err != nil {
		return 0, err
	}
	var sum float64
	found := false
	for line := range strings.SplitSeq(string(resp.Body), "\n") {
		if strings.HasPrefix(line, "#") || !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		ok := true
		for _, f := range labelFilter {
			if !strings.Contains(rest, f) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		var v float64
		if _, err := fmt.Sscan(fields[len(fields)-1], &v); err == nil {
			sum += v
			found = true
		}
	}
	if !found {
		return 0, fmt.Errorf("metric %s%v not found on %s", name, labelFilter, svc.Name)
	}
	return sum, nil
}

// Ready reports the /readyz status of svc (0 when it does not answer).
func (e *Env) Ready(svc *harness.Service) int {
	req, _ := http.NewRequest(http.MethodGet, svc.URL("/readyz"), nil)
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// onDatabase is svc for running subcommands by hand against database db of
// the suite's stack instead of its own.
func (e *Env) onDatabase(svc *harness.Service, db string) *harness.Service {
	env := maps.Clone(svc.Env)
	for k := range env {
		if strings.HasSuffix(k, "_DATABASE_URL") {
			env[k] = e.Stack.DatabaseURL(db)
		}
	}
	return &harness.Service{Name: svc.Name + " on " + db, Bin: svc.Bin, Addr: svc.Addr, LogPath: svc.LogPath, Env: env}
}
