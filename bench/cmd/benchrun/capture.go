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

	"github.com/tickerdesk/tickerdesk/bench/internal/sqlcapture"
)

// probe is one request whose SQL is captured, and how its logged parameter
// values map to pgbench variables.
type probe struct {
	workload string
	db       string
	send     func(ctx context.Context, i int) error // i: 0 or 1, the two capture windows
	bind     func(i, script int) sqlcapture.Binding // bindings of window i for script number script
	prelude  string
}

// captured is the SQL of one workload: the statements of the first probe
// window that also ran in the second (so background statements drop out).
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
	return b.captureProbes(ctx, probes)
}

// captureProbes sends every probe's requests to the running services
// (started with statement logging on their databases) and reads back the
// statements each ran from the server log.
func (b *bench) captureProbes(ctx context.Context, probes []probe) (map[string]captured, error) {
	logPath, err := b.serverLog(ctx)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(logPath)
	if err != nil {
		return nil, err
	}
	offset := st.Size()
	for _, p := range probes {
		for i := range 2 {
			// An unmeasured request first, so keys are verified and
			// statements prepared before the window opens.
			if err := p.send(ctx, i+2); err != nil {
				return nil, fmt.Errorf("probe %s: %w", p.workload, err)
			}
			if err := b.db.exec(ctx, p.db, fmt.Sprintf("SELECT 'bench-probe:%s:%d:start'", p.workload, i)); err != nil {
				return nil, err
			}
			if err := p.send(ctx, i); err != nil {
				return nil, fmt.Errorf("probe %s: %w", p.workload, err)
			}
			if err := b.db.exec(ctx, p.db, fmt.Sprintf("SELECT 'bench-probe:%s:%d:end'", p.workload, i)); err != nil {
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
		var windows [2][]sqlcapture.Statement
		for i := range 2 {
			w, err := sqlcapture.Between(all, fmt.Sprintf("bench-probe:%s:%d:start", p.workload, i),
				fmt.Sprintf("bench-probe:%s:%d:end", p.workload, i), skip)
			if err != nil {
				return nil, fmt.Errorf("capture %s: %w", p.workload, err)
			}
			windows[i] = w
		}
		stmts := sqlcapture.Common(windows[0], windows[1])
		if len(stmts) == 0 {
			return nil, fmt.Errorf("capture %s: the service ran no SQL for the probe request", p.workload)
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
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
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
