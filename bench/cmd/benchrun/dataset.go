package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	notesDB      = "bench_notes"
	marketdataDB = "bench_marketdata"
	importDB     = "bench_import"
	postTitle    = "bench-post note"
)

func (b *bench) bin(name string) string { return filepath.Join(b.cfg.Root, "bin", name) }

func (b *bench) benchTool(name string) string { return filepath.Join(b.cfg.Out, "bin", name) }

// notesEnv gives every key a rate the load never reaches, so that the
// rate limiter runs on every request, as for a customer's key.
func (b *bench) notesEnv() map[string]string {
	return map[string]string{"NOTES_DATABASE_URL": b.db.dbURL(notesDB), "NOTES_RATE_LIMIT_PER_SECOND": notesBenchRate}
}

// notesBenchRate is the most NOTES_RATE_LIMIT_PER_SECOND allows.
const notesBenchRate = "100000"

func (b *bench) marketdataEnv(db string) map[string]string {
	return map[string]string{"MARKETDATA_DATABASE_URL": b.db.dbURL(db), "MARKETDATA_REDIS_URL": b.cfg.RedisURL}
}

// prepareMarketdata makes sure bench_marketdata holds the generated
// dataset, regenerating it only when the marker comment of the database
// does not name the same generator settings.
func (b *bench) prepareMarketdata(ctx context.Context) error {
	marker := fmt.Sprintf("tickerdesk-bench marketdata: generate --symbols %d --years %d --seed %d",
		b.cfg.Symbols, b.cfg.Years, b.cfg.Seed)
	current, err := b.db.comment(ctx, marketdataDB)
	if err != nil {
		return err
	}
	ds := &b.res.Dataset
	if b.cfg.Fresh || current != marker {
		b.logf("marketdata dataset: generating (%s)", marker)
		if err := b.db.recreate(ctx, marketdataDB); err != nil {
			return err
		}
		if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: b.marketdataEnv(marketdataDB)}); err != nil {
			return err
		}
		t0 := time.Now()
		out, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"),
			args: []string{"generate", "--symbols", fmt.Sprint(b.cfg.Symbols), "--years", fmt.Sprint(b.cfg.Years), "--seed", fmt.Sprint(b.cfg.Seed)},
			env:  b.marketdataEnv(marketdataDB)})
		if err != nil {
			return err
		}
		ds.GenerateSeconds = time.Since(t0).Seconds()
		ds.GenerateOutput = lastLines(out, 3)
		if err := b.db.exec(ctx, marketdataDB, "VACUUM ANALYZE"); err != nil {
			return err
		}
		if err := b.db.exec(ctx, "postgres", fmt.Sprintf("COMMENT ON DATABASE %s IS %s", marketdataDB, lit(marker))); err != nil {
			return err
		}
	} else {
		b.logf("marketdata dataset: present (%s)", marker)
		ds.Reused = true
	}
	if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: b.marketdataEnv(marketdataDB)}); err != nil {
		return err
	}
	rows, err := b.db.query(ctx, marketdataDB, "SELECT symbol FROM tickers WHERE has_eod ORDER BY symbol")
	if err != nil {
		return err
	}
	for _, r := range rows {
		b.symbols = append(b.symbols, r[0])
	}
	if len(b.symbols) < 40 {
		return fmt.Errorf("bench_marketdata has %d tickers with EOD data; want at least 40", len(b.symbols))
	}
	est, err := b.db.value(ctx, marketdataDB, "SELECT reltuples::bigint FROM pg_class WHERE relname = 'eod_bars'")
	if err != nil {
		return err
	}
	ds.EODRows = est
	ds.Symbols = len(b.symbols)
	span, err := b.db.query(ctx, marketdataDB, fmt.Sprintf(
		"SELECT min(date), max(date) FROM eod_bars WHERE symbol = %s", lit(b.symbols[0])))
	if err != nil || len(span) == 0 || span[0][0] == "" {
		return fmt.Errorf("date span of %s: %v", b.symbols[0], err)
	}
	if b.first, err = time.Parse(time.DateOnly, span[0][0]); err != nil {
		return err
	}
	if b.last, err = time.Parse(time.DateOnly, span[0][1]); err != nil {
		return err
	}
	ds.DateFrom, ds.DateTo = span[0][0], span[0][1]

	key, err := b.createKey(ctx, b.bin("marketdata-svc"), b.marketdataEnv(marketdataDB), "bench-marketdata",
		"--rate-per-second", fmt.Sprint(b.cfg.MDRate), "--monthly-quota", fmt.Sprint(b.cfg.MDQuota))
	if err != nil {
		return err
	}
	b.mdKey = key
	b.r.addSecret(key, "$MARKETDATA_KEY")
	return nil
}

// createKey runs `<svc> keys create --account NAME ...` and returns the key
// on the last line of its output.
func (b *bench) createKey(ctx context.Context, bin string, env map[string]string, account string, extra ...string) (string, error) {
	out, err := b.r.output(ctx, cmdSpec{name: bin, quiet: true, env: env,
		args: append([]string{"keys", "create", "--account", account}, extra...)})
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	if key == "" || strings.ContainsAny(key, " \t") {
		return "", fmt.Errorf("keys create printed no key on its last line: %q", lastLines(out, 2))
	}
	return key, nil
}

// prepareNotes makes sure bench_notes holds the notes dataset, creates one
// fresh key per bench account, and removes what earlier POST runs added.
func (b *bench) prepareNotes(ctx context.Context) error {
	marker := fmt.Sprintf("tickerdesk-bench notes: %d notes over %d accounts", b.cfg.Notes, b.cfg.Accounts)
	current, err := b.db.comment(ctx, notesDB)
	if err != nil {
		return err
	}
	load := b.cfg.Fresh || current != marker
	if load {
		b.logf("notes dataset: loading (%s)", marker)
		if err := b.db.recreate(ctx, notesDB); err != nil {
			return err
		}
	} else {
		b.logf("notes dataset: present (%s)", marker)
	}
	if _, err := b.r.output(ctx, cmdSpec{name: b.bin("notes-svc"), args: []string{"migrate"}, env: b.notesEnv()}); err != nil {
		return err
	}
	t0 := time.Now()
	keys := make([]string, b.cfg.Accounts)
	for i := range keys {
		k, err := b.createKey(ctx, b.bin("notes-svc"), b.notesEnv(), accountName(i))
		if err != nil {
			return err
		}
		keys[i] = k
	}
	b.r.commands = append(b.r.commands, fmt.Sprintf("NOTES_DATABASE_URL=%s %s keys create --account bench-001 ... bench-%03d  # one key per account, %.1fs",
		b.db.dbURL(notesDB), b.bin("notes-svc"), b.cfg.Accounts, time.Since(t0).Seconds()))
	rows, err := b.db.query(ctx, notesDB, "SELECT id, name FROM accounts WHERE name LIKE 'bench-%' ORDER BY name")
	if err != nil {
		return err
	}
	if len(rows) < b.cfg.Accounts {
		return fmt.Errorf("bench_notes has %d bench accounts, want %d", len(rows), b.cfg.Accounts)
	}
	accountsFile := filepath.Join(b.cfg.Out, "notes-accounts.tsv")
	var sb strings.Builder
	for _, r := range rows[:b.cfg.Accounts] {
		sb.WriteString(r[0] + "\t" + r[1] + "\n")
	}
	if err := os.WriteFile(accountsFile, []byte(sb.String()), 0o644); err != nil {
		return err
	}
	ds := &b.res.Dataset
	if load {
		csvFile := filepath.Join(b.cfg.Out, "notes.csv")
		t0 := time.Now()
		if _, err := b.r.output(ctx, cmdSpec{name: b.benchTool("benchdata"),
			args: []string{"notes", "-accounts", accountsFile, "-n", fmt.Sprint(b.cfg.Notes), "-out", csvFile}}); err != nil {
			return err
		}
		if err := b.db.exec(ctx, notesDB, fmt.Sprintf(`\copy notes (%s) FROM %s WITH (FORMAT csv)`, "id,account_id,title,content,tags,created_at,updated_at,version", lit(csvFile))); err != nil {
			return err
		}
		if err := b.db.exec(ctx, notesDB, "VACUUM ANALYZE"); err != nil {
			return err
		}
		if err := b.db.exec(ctx, "postgres", fmt.Sprintf("COMMENT ON DATABASE %s IS %s", notesDB, lit(marker))); err != nil {
			return err
		}
		ds.NotesLoadSeconds = time.Since(t0).Seconds()
		os.Remove(csvFile)
	} else {
		ds.NotesReused = true
	}
	if err := b.cleanNotes(ctx); err != nil {
		return err
	}
	// One note per account, the account's first by id: the rows the GET
	// workload and its pgbench ceiling read.
	picked, err := b.db.query(ctx, notesDB, `SELECT DISTINCT ON (n.account_id) n.account_id, n.id
		FROM notes n JOIN accounts a ON a.id = n.account_id WHERE a.name LIKE 'bench-%'
		ORDER BY n.account_id, n.id`)
	if err != nil {
		return err
	}
	byAccount := map[string]string{}
	for _, r := range picked {
		byAccount[r[0]] = r[1]
	}
	for i, r := range rows[:b.cfg.Accounts] {
		id, ok := byAccount[r[0]]
		if !ok {
			return fmt.Errorf("account %s has no notes", r[1])
		}
		b.notes = append(b.notes, benchAccount{key: keys[i], accountID: r[0], noteID: id})
		b.r.addSecret(keys[i], fmt.Sprintf("$NOTES_KEY_%03d", i+1))
	}
	n, err := b.db.value(ctx, notesDB, "SELECT count(*) FROM notes")
	if err != nil {
		return err
	}
	ds.Notes, ds.Accounts = n, b.cfg.Accounts
	return nil
}

func accountName(i int) string { return fmt.Sprintf("bench-%03d", i+1) }

// cleanNotes removes the notes that POST workloads (service and pgbench)
// added, so every run starts from the same table.
func (b *bench) cleanNotes(ctx context.Context) error {
	if err := b.db.exec(ctx, notesDB, fmt.Sprintf("DELETE FROM notes WHERE title = %s", lit(postTitle))); err != nil {
		return err
	}
	return b.db.exec(ctx, notesDB, "VACUUM ANALYZE notes")
}
