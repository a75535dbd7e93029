package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runImport measures `marketdata-svc import` of a generated price CSV
// against psql's \copy of the same file into the same table, each into an
// empty eod_bars of a freshly migrated bench_import database.
func (b *bench) runImport(ctx context.Context) error {
	b.logf("workload import")
	file := filepath.Join(b.cfg.Out, fmt.Sprintf("prices-%d.csv", b.cfg.ImportRows))
	res := ImportResult{ID: "import", Rows: b.cfg.ImportRows, Target: 0.5,
		Ceiling: ImportCeiling{What: "COPY of the same file into the same empty eod_bars table"},
		Layout:  "Symbol,Date,Open,High,Low,Close,Volume (one row per symbol and day)"}
	env, drop, err := b.prepareImport(ctx, &res, importDB, file, "prices", "-rows", fmt.Sprint(b.cfg.ImportRows))
	if err != nil {
		return err
	}
	defer drop()

	copySQL := fmt.Sprintf(`\copy eod_bars (symbol, date, open, high, low, close, volume) FROM %s WITH (FORMAT csv, HEADER true)`, lit(file))
	if err := b.timedCopy(ctx, &res, importDB, copySQL); err != nil {
		return err
	}
	n, err := b.db.value(ctx, importDB, "SELECT count(*) FROM eod_bars")
	if err != nil {
		return err
	}
	if n != fmt.Sprint(b.cfg.ImportRows) {
		return fmt.Errorf("copy loaded %s rows, want %d", n, b.cfg.ImportRows)
	}
	if err := b.db.exec(ctx, importDB, "TRUNCATE eod_bars, tickers"); err != nil {
		return err
	}
	if err := b.db.exec(ctx, importDB, "VACUUM ANALYZE"); err != nil {
		return err
	}

	out, err := b.timeImport(ctx, &res, env, "import", file)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "rows/s") {
			res.ImportOutput = strings.TrimSpace(line)
		}
	}
	n, err = b.db.value(ctx, importDB, "SELECT count(*) FROM eod_bars")
	if err != nil {
		return err
	}
	if n != fmt.Sprint(b.cfg.ImportRows) {
		return fmt.Errorf("import loaded %s rows, want %d", n, b.cfg.ImportRows)
	}
	b.score(&res)
	b.res.Import = &res
	return nil
}

// prepareImport writes file with `benchdata args... -out file`, notes its
// size in res, and creates and migrates database db for both sides of the
// import to load into; drop removes db again. env is marketdata-svc's
// environment on db.
func (b *bench) prepareImport(ctx context.Context, res *ImportResult, db, file string, args ...string) (env map[string]string, drop func(), err error) {
	if _, err := b.r.output(ctx, cmdSpec{name: b.benchTool("benchdata"), args: append(args, "-out", file)}); err != nil {
		return nil, nil, err
	}
	st, err := os.Stat(file)
	if err != nil {
		return nil, nil, err
	}
	res.FileMB = mb(st.Size())
	if err := b.db.recreate(ctx, db); err != nil {
		return nil, nil, err
	}
	drop = func() {
		_ = b.db.exec(context.WithoutCancel(ctx), "postgres", "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
	}
	env = b.marketdataEnv(db)
	if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: env}); err != nil {
		drop()
		return nil, nil, err
	}
	// Read the file once so both sides start from the page cache.
	if _, err := os.ReadFile(file); err != nil {
		drop()
		return nil, nil, err
	}
	return env, drop, nil
}

// timeImport runs `marketdata-svc args...` as the measured import of res,
// recording its command line, wall time, CPU time and peak memory, and
// returns what it printed.
func (b *bench) timeImport(ctx context.Context, res *ImportResult, env map[string]string, args ...string) (string, error) {
	cmd := b.r.command(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: args, env: env})
	res.ImportCommand = b.r.commands[len(b.r.commands)-1]
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Start()
	var hwm int64
	if err == nil {
		stop := watchHWM(cmd.Process.Pid)
		err = cmd.Wait()
		hwm = stop()
	}
	res.ImportSeconds = time.Since(t0).Seconds()
	if err != nil {
		// The last argument is the file.
		return "", fmt.Errorf("marketdata-svc %s: %w: %s", strings.Join(args[:len(args)-1], " "), err, lastLines(out.String(), 6))
	}
	if ps := cmd.ProcessState; ps != nil {
		res.ImportCPUSeconds = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	res.ImportMaxRSSMB = float64(hwm) / (1 << 20)
	return out.String(), nil
}

// watchHWM samples pid's VmHWM every 10 ms until stop, which returns the
// last figure read: the peak resident memory of the program pid runs.
// The child's rusage cannot say it: Go starts a child with vfork, and at
// exec Linux folds the high-water mark of the memory the child shared,
// the parent's, into the child's ru_maxrss, so a command started by a
// large benchrun reported benchrun's peak as its own.
func watchHWM(pid int) (stop func() int64) {
	done := make(chan struct{})
	last := make(chan int64, 1)
	go func() {
		var hwm int64
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if h, _, err := memStatus(pid); err == nil && h > hwm {
				hwm = h
			}
			select {
			case <-done:
				last <- hwm
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		return <-last
	}
}

// score derives an import's rates from its timings and its verdict from
// the ratio to COPY, and logs them.
func (b *bench) score(res *ImportResult) {
	res.CopyRowsPerSec = float64(res.Rows) / res.CopySeconds
	res.ImportRowsPerSec = float64(res.Rows) / res.ImportSeconds
	res.Ratio = res.ImportRowsPerSec / res.CopyRowsPerSec
	res.Status = "pass"
	if res.Ratio < res.Target {
		res.Status = "miss"
	}
	b.logf("%s: %.0f rows/s vs COPY %.0f rows/s: ratio %.2f (%s)", res.ID, res.ImportRowsPerSec, res.CopyRowsPerSec, res.Ratio, res.Status)
}
