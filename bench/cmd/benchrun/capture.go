package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tickerdesk/tickerdesk/bench/internal/sqlcapture"
)

// probe is one request whose SQL is captured, and how its logged parameter
// values map to pgbench variables.
type probe struct {
	workload string
	db       string
	send     func(ctx context.Context, i int) error // i: the capture window, or an unmeasured request from probeWindows up
	// minimal sends the same request to the minimal notes server, for a
	// workload it is the ceiling of; nil for the others.
	minimal func(ctx context.Context, i int) error
	bind    func(i, script int) sqlcapture.Binding // bindings of window i for script number script
	prelude string
}

// probeWindows is how many times each probe request is captured: a
// statement counts as the request's only when every window has it, so a
// background statement (the webhook relay's and the job queue's polls,
// every 100 ms or so) must land in all of them to pass.
const probeWindows = 3

// captured is the SQL of one workload: the statements of the first probe
// window that also ran in every other (so background statements drop out).
type captured struct {
	stmts []sqlcapture.Statement
	probe probe
}

// serverLog finds the PostgreSQL server log: BENCH_PG_LOG, or server.log in
// the data directory (where scripts/stack.sh has pg_ctl write it).
func (b *bench) serverLog(ctx context.Context) (string, error) {
	if b.cfg.PGLog != "" {
		return b.cfg.PGLog, nil
	}
	dir, err := b.db.value(ctx, "postgres", "SHOW data_directory")
	if err != nil {
		return "", err
	}
	for _, name := range []string{"server.log", "log/postgresql.log"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server log under %s; set BENCH_PG_LOG", dir)
}

// captureSQL runs every probe against service instances started with
// log_statement = 'all' on the bench databases, and reads back what they
// ran. The instances are stopped and the setting reset afterwards; the
// measured run uses fresh instances without statement logging.
func (b *bench) captureSQL(ctx context.Context, probes []probe) (map[string]captured, error) {
	if _, err := b.serverLog(ctx); err != nil {
		return nil, err
	}
	dbs := []string{notesDB}
	if b.needMarketdata() {
		dbs = append(dbs, marketdataDB)
	}
	for _, db := range dbs {
		if err := b.db.exec(ctx, "postgres", fmt.Sprintf("ALTER DATABASE %s SET log_statement = 'all'", db)); err != nil {
			return nil, err
		}
		defer b.db.exec(context.WithoutCancel(ctx), "postgres", fmt.Sprintf("ALTER DATABASE %s RESET log_statement", db))
	}
	if err := b.startServices(ctx, "probe"); err != nil {
		return nil, err
	}
	defer b.stopServices()
	caps, err := b.captureServiceProbes(ctx, probes)
	if err != nil {
		return nil, err
	}
	if err := b.checkMinimalSQL(ctx, probes, caps); err != nil {
		return nil, err
	}
	return caps, nil
}

// captureServiceProbes is captureProbes of the requests to the services.
func (b *bench) captureServiceProbes(ctx context.Context, probes []probe) (map[string]captured, error) {
	return b.captureProbes(ctx, probes, "service", func(p probe) func(context.Context, int) error { return p.send })
}

// checkMinimalSQL sends the probes of the notes workloads to a minimal
// notes server started with statement logging, and fails unless it ran
// the statements the service ran, in the same order: the minimal server
// copies notes-svc's statements by hand, and a ceiling that runs other
// SQL (fewer columns, a different filter) measures other work.
func (b *bench) checkMinimalSQL(ctx context.Context, probes []probe, caps map[string]captured) error {
	var sent []probe
	for _, p := range probes {
		if p.minimal != nil {
			sent = append(sent, p)
		}
	}
	if len(sent) == 0 {
		return nil
	}
	if err := b.startMinimal(ctx); err != nil {
		return err
	}
	defer func() {
		b.minimal.stop()
		b.minimal = nil
	}()
	got, err := b.captureProbes(ctx, sent, "minimal", func(p probe) func(context.Context, int) error { return p.minimal })
	if err != nil {
		return err
	}
	for _, p := range sent {
		if diff := sqlDiff(caps[p.workload].stmts, got[p.workload].stmts); diff != "" {
			return fmt.Errorf("%s: the minimal notes server (bench/cmd/minimalnotes) does not run the SQL notes-svc runs; copy notesdb's statements again: %s", p.workload, diff)
		}
	}
	return nil
}

// sqlDiff describes how the statements of service and minimal differ in text
// or order; "" when they do not.
func sqlDiff(service, minimal []sqlcapture.Statement) string {
	n := max(len(service), len(minimal))
	for i := range n {
		var s, m string
		if i < len(service) {
			s = service[i].SQL
		}
		if i < len(minimal) {
			m = minimal[i].SQL
		}
		if s != m {
			return fmt.Sprintf("statement %d of %d: notes-svc ran %q, the minimal server %q", i+1, n, s, m)
		}
	}
	return ""
}

// captureProbes sends every probe's requests (through send: to the
// running services, or to the minimal server) with statement logging on
// their databases, and reads back the statements each ran from the server
// log. Each window is opened and closed by a marker statement on a
// connection of the harness's own, so that it spans the request and
// little more, and a statement is kept only when every window ran it.
func (b *bench) captureProbes(ctx context.Context, probes []probe, tag string, send func(probe) func(context.Context, int) error) (map[string]captured, error) {
	logPath, err := b.serverLog(ctx)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(logPath)
	if err != nil {
		return nil, err
	}
	offset := st.Size()
	markers := map[string]*pgx.Conn{}
	defer func() {
		for _, c := range markers {
			c.Close(context.WithoutCancel(ctx))
		}
	}()
	mark := func(db, text string) error {
		c := markers[db]
		if c == nil {
			cfg, err := pgx.ParseConfig(b.db.dbURL(db))
			if err != nil {
				return err
			}
			cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
			if c, err = pgx.ConnectConfig(ctx, cfg); err != nil {
				return fmt.Errorf("marker connection: %w", err)
			}
			markers[db] = c
		}
		_, err := c.Exec(ctx, "SELECT '"+text+"'")
		return err
	}
	marker := func(p probe, i int, edge string) string {
		return fmt.Sprintf("bench-probe:%s:%s:%d:%s", tag, p.workload, i, edge)
	}
	for _, p := range probes {
		do := send(p)
		for i := range probeWindows {
			// An unmeasured request first, so keys are verified and
			// statements prepared before the window opens.
			if err := do(ctx, i+probeWindows); err != nil {
				return nil, fmt.Errorf("probe %s: %w", p.workload, err)
			}
			if err := mark(p.db, marker(p, i, "start")); err != nil {
				return nil, err
			}
			if err := do(ctx, i); err != nil {
				return nil, fmt.Errorf("probe %s: %w", p.workload, err)
			}
			if err := mark(p.db, marker(p, i, "end")); err != nil {
				return nil, err
			}
		}
	}
	time.Sleep(300 * time.Millisecond) // let the server flush its log
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	all := sqlcapture.Parse(string(data))
	skip := func(s sqlcapture.Statement) bool {
		// Key lookups are cached by the services and the last-used flush
		// and idempotency clean-up are periodic: not per-request work.
		return strings.Contains(s.SQL, "api_keys") || strings.Contains(s.SQL, "idempotency_keys")
	}
	out := map[string]captured{}
	for _, p := range probes {
		var stmts []sqlcapture.Statement
		for i := range probeWindows {
			w, err := sqlcapture.Between(all, marker(p, i, "start"), marker(p, i, "end"), skip)
			if err != nil {
				return nil, fmt.Errorf("capture %s: %w", p.workload, err)
			}
			if i == 0 {
				stmts = w
			} else {
				stmts = sqlcapture.Common(stmts, w)
			}
		}
		if len(stmts) == 0 {
			return nil, fmt.Errorf("capture %s: the %s ran no SQL for the probe request", p.workload, tag)
		}
		out[p.workload] = captured{stmts: stmts, probe: p}
	}
	return out, nil
}

// pgbenchScripts writes one pgbench script per account or symbol pair (n
// scripts) from a captured workload and returns their files and the -D
// variables they need.
func (b *bench) pgbenchScripts(c captured, n int, vars map[string]string) ([]string, map[string]string, string, error) {
	dir := filepath.Join(b.cfg.Out, "pgbench", c.probe.workload)
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, "", err
	}
	defines := map[string]string{}
	for k, v := range vars {
		defines[k] = v
	}
	var files []string
	var first string
	for s := range n {
		sc := sqlcapture.BuildScript(c.stmts, c.probe.bind(0, s), c.probe.prelude)
		for k, v := range sc.Constants {
			defines[k] = v
		}
		path := filepath.Join(dir, fmt.Sprintf("s%03d.sql", s+1))
		if err := os.WriteFile(path, []byte(sc.Text), 0o644); err != nil {
			return nil, nil, "", err
		}
		if s == 0 {
			first = sc.Text
		}
		files = append(files, path)
	}
	return files, defines, first, nil
}

// httpCall sends one request and fails unless the status is 2xx.
func httpCall(ctx context.Context, method, u, key string, body []byte) ([]byte, error) {
	_, data, err := httpAnswer(ctx, method, u, key, body)
	return data, err
}

// httpAnswer is httpCall with the answer's headers.
func httpAnswer(ctx context.Context, method, u, key string, body []byte) (http.Header, []byte, error) {
	return httpSend(ctx, method, u, key, "", body)
}

// notesCall is httpCall for a notes request as notes.lua sends it: with
// the account's key, which notes-svc reads, and its id as X-Account-ID,
// which the minimal notes server reads.
func notesCall(ctx context.Context, method, u string, a benchAccount, body []byte) ([]byte, error) {
	_, data, err := httpSend(ctx, method, u, a.key, a.accountID, body)
	return data, err
}

func httpSend(ctx context.Context, method, u, key, account string, body []byte) (http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if account != "" {
		req.Header.Set("X-Account-ID", account)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, data, fmt.Errorf("%s %s: status %d: %.300s", method, redactQuery(u), resp.StatusCode, data)
	}
	return resp.Header, data, nil
}

func redactQuery(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "?"
	}
	q := p.Query()
	if q.Has("access_key") {
		q.Set("access_key", "REDACTED")
	}
	p.RawQuery = q.Encode()
	return p.String()
}

// noteIDRe matches the ids a note write generates, the note's and its
// event's: pgbench replays each with a fresh value (both share one, each
// unique in its own table).
var noteIDRe = regexp.MustCompile(`^(note|evt)_[0-9A-Z]{26}$`)
