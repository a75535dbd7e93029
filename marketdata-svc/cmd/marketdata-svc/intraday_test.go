package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// The intraday commands through run: import --kind intraday with --tz,
// its flag errors, and generate --intraday, twice each (the second run
// changes nothing).
func TestIntradayCommands(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"MARKETDATA_DATABASE_URL": testenv.Postgres(t), "MARKETDATA_REDIS_URL": testenv.Redis(t)}
	getenv := func(k string) string { return env[k] }
	cmd := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, getenv, &out)
		return out.String(), err
	}
	path := filepath.Join(t.TempDir(), "minutes.csv")
	if err := os.WriteFile(path, []byte("Datetime,Open,High,Low,Close,Volume\n2024-07-08 09:30:00,1,2,0.5,1.5,10\n2024-07-08 09:31:00,1.5,2,1,1,20\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd("import", "--kind", "intraday", "--symbol", "ZZZ", path); err == nil || !strings.Contains(err.Error(), "pass --tz") {
		t.Errorf("zoneless without --tz: %v", err)
	}
	if _, err := cmd("import", "--tz", "America/New_York", path); err == nil || !strings.Contains(err.Error(), "--tz is for --kind intraday") {
		t.Errorf("--tz without --kind intraday: %v", err)
	}
	if _, err := cmd("import", "--kind", "intraday", "--tz", "Mars/Olympus", path); err == nil {
		t.Error("an unknown zone is accepted")
	}
	out, err := cmd("import", "--kind", "intraday", "--tz", "America/New_York", "--symbol", "zzz", path)
	if err != nil || !strings.Contains(out, "2 intraday rows") || !strings.Contains(out, "2 minutes changed") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	if out, err = cmd("import", "--kind", "intraday", "--tz", "America/New_York", "--symbol", "ZZZ", path); err != nil || !strings.Contains(out, "0 minutes changed, version 0") {
		t.Errorf("re-import: %v\n%s", err, out)
	}

	if out, err = cmd("generate", "--symbols", "3", "--years", "1"); err != nil {
		t.Fatalf("generate: %v\n%s", err, out)
	}
	if out, err = cmd("generate", "--intraday", "--symbols", "3", "--days", "2"); err != nil || !strings.Contains(out, "2340 synthetic minutes of 6 days of 3 symbols") {
		t.Fatalf("generate --intraday: %v\n%s", err, out)
	}
	if out, err = cmd("generate", "--intraday", "--tickers", "SYN000001,SYN000002,SYN000003", "--days", "2"); err != nil || !strings.Contains(out, "0 changed, version 0") {
		t.Errorf("generate --intraday again: %v\n%s", err, out)
	}
	if _, err = cmd("generate", "--intraday", "--symbols", "3", "--tickers", "A"); err == nil {
		t.Error("--symbols and --tickers together are accepted")
	}
	store, err := marketdatadb.Open(ctx, config.Config{DatabaseURL: env["MARKETDATA_DATABASE_URL"], DBMaxOpenConns: 2, DBMaxIdleConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p, err := reads.New(store.DB()).Intraday(ctx, marketdata.IntradayQuery{Symbols: []string{"SYN000002", "ZZZ"}, Interval: marketdata.DayMinutes, Limit: 10})
	if err != nil || p.Total != 3 {
		t.Errorf("24hour bars: %+v %v", p, err)
	}
}
