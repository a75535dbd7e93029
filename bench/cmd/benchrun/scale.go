package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The scale workloads (scale_*) measure the EOD, ticker and exchange reads
// at marketstack's size, 100M bars of 40,000 symbols and 170,000 tickers on
// 70 exchanges, next to the same reads at a hundredth of it, measured in
// the same run: what grows with the table shows as a ratio. Each size is a
// database of its own (bench_scale_small, bench_scale_large), kept between
// runs under a marker comment like the other datasets; BENCH_FRESH=1
// reloads it and BENCH_SCALE=small runs the small size alone.

// scaleSize is one size of the scale dataset: `marketdata-svc generate
// --symbols Symbols --years Years --universe Tickers --exchanges Exchanges`.
type scaleSize struct {
	Name      string
	Symbols   int
	Years     int
	Tickers   int
	Exchanges int
}

// scaleSizes are the two sizes, small first: 1M and 100M bars (400 and
// 40,000 symbols over the weekdays of 10 years), 5,000 and 170,000 tickers.
var scaleSizes = []scaleSize{
	{Name: "small", Symbols: 400, Years: 10, Tickers: 5_000, Exchanges: 70},
	{Name: "large", Symbols: 40_000, Years: 10, Tickers: 170_000, Exchanges: 70},
}

func (s scaleSize) db() string { return "bench_scale_" + s.Name }

// scaleRefDB is a freshly migrated database the loaded schema is compared
// with.
const scaleRefDB = "bench_scale_schema"

// scaleTables are the tables the scale dataset fills, whose storage the
// report lists.
var scaleTables = []string{"eod_bars", "tickers", "exchanges", "splits", "dividends"}

// scaleIDs are the scale workloads; BENCH_WORKLOADS=scale names them all.
var scaleIDs = []string{"scale_eod_range", "scale_eod_latest", "scale_eod_date", "scale_ticker_search", "scale_exchange_tickers", "scale_hit", updateID}

// wantScale reports whether any scale workload runs.
func (b *bench) wantScale() bool {
	for _, id := range scaleIDs {
		if b.want(id) {
			return true
		}
	}
	return false
}

// sizes are the sizes this run measures (BENCH_SCALE).
func (b *bench) sizes() []scaleSize {
	if b.cfg.Scale == "small" {
		return scaleSizes[:1]
	}
	return scaleSizes
}

// ScaleDataset is one size of the scale dataset in results.json.
type ScaleDataset struct {
	Size      string `json:"size"`
	DB        string `json:"db"`
	Symbols   int    `json:"symbols"`
	Years     int    `json:"years"`
	Tickers   int    `json:"tickers"`
	Exchanges int    `json:"exchanges"`
	// Bars is pg_class.reltuples of eod_bars (exact after the load's
	// VACUUM); Splits and Dividends are counted.
	Bars      int64  `json:"bars"`
	Splits    int64  `json:"splits"`
	Dividends int64  `json:"dividends"`
	DateFrom  string `json:"date_from"`
	DateTo    string `json:"date_to"`
	Reused    bool   `json:"reused"`
	// Load is how this run loaded it; nil when reused.
	Load *ScaleLoad `json:"load,omitempty"`
	// Storage is every table of scaleTables and each of its indexes.
	Storage []Relation `json:"storage"`
	// Bytes per bar of eod_bars: its table (heap, TOAST, maps) and its
	// indexes, over Bars.
	HeapBytesPerBar  float64 `json:"heap_bytes_per_bar"`
	IndexBytesPerBar float64 `json:"index_bytes_per_bar"`
	BytesPerBar      float64 `json:"bytes_per_bar"`
	DatabaseBytes    int64   `json:"database_bytes"`
	// AllVisible is the share of eod_bars' pages marked all-visible,
	// which its index-only scans need.
	AllVisible   float64 `json:"all_visible_share"`
	CheckSeconds float64 `json:"check_seconds"`
}

// ScaleLoad is the load of one size: the migrated schema with eod_bars'
// primary key and tickers' secondary indexes dropped, `marketdata-svc
// generate` streaming every bar into one binary COPY (and ending with
// VACUUM ANALYZE), the dropped indexes built again, VACUUM (FREEZE,
// ANALYZE) and a checkpoint.
type ScaleLoad struct {
	Seconds         float64      `json:"seconds"`
	GenerateSeconds float64      `json:"generate_seconds"`
	GenerateOutput  string       `json:"generate_output"`
	Indexes         []IndexBuild `json:"indexes"`
	IndexSeconds    float64      `json:"index_seconds"`
	VacuumSeconds   float64      `json:"vacuum_seconds"`
	BarsPerSecond   float64      `json:"bars_per_second"`
	LoadAvgBefore   string       `json:"loadavg_before"`
	LoadAvgAfter    string       `json:"loadavg_after"`
	SchemaCheck     string       `json:"schema_check"`
}

// IndexBuild is one index built after the load.
type IndexBuild struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Relation is the size of a table (pg_table_size: heap, TOAST and maps)
// or of one of its indexes.
type Relation struct {
	Name  string `json:"name"`
	Table string `json:"table"`
	Index bool   `json:"index"`
	Bytes int64  `json:"bytes"`
}

// marker is the comment that names the dataset of size s.
func (s scaleSize) marker(seed int) string {
	return fmt.Sprintf("tickerdesk-bench scale %s: generate --symbols %d --years %d --universe %d --exchanges %d --seed %d, indexes built after the load",
		s.Name, s.Symbols, s.Years, s.Tickers, s.Exchanges, seed)
}

// prepareScale makes sure the database of size s holds its dataset, and
// describes it.
func (b *bench) prepareScale(ctx context.Context, s scaleSize) (*ScaleDataset, error) {
	t0 := time.Now()
	ds := &ScaleDataset{Size: s.Name, DB: s.db(), Symbols: s.Symbols, Years: s.Years, Tickers: s.Tickers, Exchanges: s.Exchanges}
	marker := s.marker(b.cfg.Seed)
	current, err := b.db.comment(ctx, s.db())
	if err != nil {
		return nil, err
	}
	if b.cfg.Fresh || current != marker {
		b.logf("scale dataset %s: loading (%s)", s.db(), marker)
		if ds.Load, err = b.loadScale(ctx, s); err != nil {
			return nil, fmt.Errorf("load %s: %w", s.db(), err)
		}
		if err := b.db.exec(ctx, "postgres", fmt.Sprintf("COMMENT ON DATABASE %s IS %s", ident(s.db()), lit(marker))); err != nil {
			return nil, err
		}
	} else {
		b.logf("scale dataset %s: present (%s)", s.db(), marker)
		ds.Reused = true
		// New migrations apply to a kept dataset too.
		if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: b.marketdataEnv(s.db())}); err != nil {
			return nil, err
		}
	}
	if err := b.describeScale(ctx, ds); err != nil {
		return nil, err
	}
	if ds.Load != nil {
		ds.Load.BarsPerSecond = float64(ds.Bars) / ds.Load.Seconds
	}
	ds.CheckSeconds = time.Since(t0).Seconds()
	return ds, nil
}

// loadScale recreates the database of s and loads it. The schema is the
// migrations': eod_bars' primary key and tickers' secondary indexes are
// dropped so that COPY writes the heap alone, and built again, under
// their own names and definitions, once every row is in; the result is
// compared with a freshly migrated database.
func (b *bench) loadScale(ctx context.Context, s scaleSize) (*ScaleLoad, error) {
	t0 := time.Now()
	ld := &ScaleLoad{LoadAvgBefore: loadAvg()}
	db := s.db()
	if err := b.db.recreate(ctx, db); err != nil {
		return nil, err
	}
	env := b.marketdataEnv(db)
	if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: env}); err != nil {
		return nil, err
	}
	deferred, err := b.db.query(ctx, db, deferredIndexesSQL)
	if err != nil {
		return nil, err
	}
	for _, d := range deferred {
		if err := b.db.exec(ctx, db, dropDeferred(d)); err != nil {
			return nil, err
		}
	}
	t1 := time.Now()
	out, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), env: env, args: []string{"generate",
		"--symbols", strconv.Itoa(s.Symbols), "--years", strconv.Itoa(s.Years), "--universe", strconv.Itoa(s.Tickers),
		"--exchanges", strconv.Itoa(s.Exchanges), "--seed", strconv.Itoa(b.cfg.Seed)}})
	if err != nil {
		return nil, err
	}
	ld.GenerateSeconds = time.Since(t1).Seconds()
	var said []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "generate: ") {
			said = append(said, strings.TrimPrefix(line, "generate: "))
		}
	}
	ld.GenerateOutput = strings.Join(said, "; ")
	t2 := time.Now()
	for _, d := range deferred {
		ti := time.Now()
		// Sorting 100M keys in memory, on every core, is what makes the
		// build quicker than COPY keeping the index as it goes.
		if err := b.db.exec(ctx, db, fmt.Sprintf("SET maintenance_work_mem = '1GB'; SET max_parallel_maintenance_workers = %d; %s", b.cfg.Cores, createDeferred(d))); err != nil {
			return nil, err
		}
		ld.Indexes = append(ld.Indexes, IndexBuild{Name: d[1], Seconds: time.Since(ti).Seconds()})
	}
	ld.IndexSeconds = time.Since(t2).Seconds()
	// generate's own VACUUM runs right after its commit, which the
	// stack makes asynchronous (synchronous_commit = off): until the WAL
	// writer has flushed it, VACUUM may not set the rows' hint bits, nor
	// so mark a page all-visible, and every index-only count of the
	// workloads would read the heap. This one runs seconds later; FREEZE
	// leaves autovacuum nothing to do during the measurements, and the
	// checkpoint writes the load out before them.
	t3 := time.Now()
	if err := b.db.exec(ctx, db, "VACUUM (FREEZE, ANALYZE)"); err != nil {
		return nil, err
	}
	if err := b.db.exec(ctx, db, "CHECKPOINT"); err != nil {
		return nil, err
	}
	ld.VacuumSeconds = time.Since(t3).Seconds()
	ld.Seconds = time.Since(t0).Seconds()
	ld.LoadAvgAfter = loadAvg()
	if err := b.db.recreate(ctx, scaleRefDB); err != nil {
		return nil, err
	}
	defer b.db.exec(context.WithoutCancel(ctx), "postgres", "DROP DATABASE IF EXISTS "+scaleRefDB+" WITH (FORCE)")
	if _, err := b.r.output(ctx, cmdSpec{name: b.bin("marketdata-svc"), args: []string{"migrate"}, env: b.marketdataEnv(scaleRefDB), quiet: true}); err != nil {
		return nil, err
	}
	if err := b.sameTables(ctx, db, scaleRefDB, scaleTables, func(s string) string { return s }); err != nil {
		return nil, err
	}
	ld.SchemaCheck = fmt.Sprintf("`\\d+` of %s equals that of a freshly migrated database", strings.Join(scaleTables, ", "))
	b.logf("scale dataset %s: loaded in %.0fs (generate %.0fs, indexes %.0fs, vacuum %.0fs); load average %s before, %s after",
		db, ld.Seconds, ld.GenerateSeconds, ld.IndexSeconds, ld.VacuumSeconds, ld.LoadAvgBefore, ld.LoadAvgAfter)
	return ld, nil
}

// deferredIndexesSQL lists what the load drops and builds again: the
// primary key of eod_bars (kind "p", with its constraint definition) and
// the indexes of tickers that back no constraint (kind "i", with their
// CREATE INDEX). tickers keeps its primary key, which the load's upserts
// need.
const deferredIndexesSQL = `
SELECT 'p', conname, pg_get_constraintdef(oid) FROM pg_constraint
WHERE conrelid = 'eod_bars'::regclass AND contype = 'p'
UNION ALL
SELECT 'i', indexname, indexdef FROM pg_indexes
WHERE schemaname = 'public' AND tablename = 'tickers'
  AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'tickers'::regclass)
ORDER BY 1 DESC, 2`

// dropDeferred and createDeferred drop and build again a row of
// deferredIndexesSQL.
func dropDeferred(d []string) string {
	if d[0] == "p" {
		return "ALTER TABLE eod_bars DROP CONSTRAINT " + ident(d[1])
	}
	return "DROP INDEX " + ident(d[1])
}

func createDeferred(d []string) string {
	if d[0] == "p" {
		return "ALTER TABLE eod_bars ADD CONSTRAINT " + ident(d[1]) + " " + d[2]
	}
	return d[2]
}

// describeScale fills in what ds's database holds and its storage.
func (b *bench) describeScale(ctx context.Context, ds *ScaleDataset) error {
	rows, err := b.db.query(ctx, ds.DB, `SELECT (SELECT reltuples::bigint FROM pg_class WHERE oid = 'eod_bars'::regclass),
		(SELECT count(*) FROM splits), (SELECT count(*) FROM dividends), pg_database_size(current_database()),
		(SELECT relallvisible::float8 / greatest(relpages, 1) FROM pg_class WHERE oid = 'eod_bars'::regclass)`)
	if err != nil {
		return err
	}
	ds.AllVisible, _ = strconv.ParseFloat(rows[0][4], 64)
	ds.Bars, _ = strconv.ParseInt(rows[0][0], 10, 64)
	ds.Splits, _ = strconv.ParseInt(rows[0][1], 10, 64)
	ds.Dividends, _ = strconv.ParseInt(rows[0][2], 10, 64)
	ds.DatabaseBytes, _ = strconv.ParseInt(rows[0][3], 10, 64)
	span, err := b.db.query(ctx, ds.DB, `SELECT min(date), max(date) FROM eod_bars
		WHERE symbol = (SELECT symbol FROM tickers WHERE has_eod ORDER BY symbol LIMIT 1)`)
	if err != nil || len(span) == 0 || span[0][0] == "" {
		return fmt.Errorf("%s: no bars (%v)", ds.DB, err)
	}
	ds.DateFrom, ds.DateTo = span[0][0], span[0][1]
	names := make([]string, len(scaleTables))
	for i, t := range scaleTables {
		names[i] = lit(t)
	}
	rels, err := b.db.query(ctx, ds.DB, fmt.Sprintf(`SELECT c.relname, t.relname, pg_relation_size(c.oid)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
		WHERE t.relnamespace = 'public'::regnamespace AND t.relname IN (%[1]s)
		UNION ALL
		SELECT t.relname, '', pg_table_size(t.oid) FROM pg_class t
		WHERE t.relnamespace = 'public'::regnamespace AND t.relkind = 'r' AND t.relname IN (%[1]s)`, strings.Join(names, ", ")))
	if err != nil {
		return err
	}
	ds.Storage = storageOrder(rels)
	var heap, index int64
	for _, r := range ds.Storage {
		switch {
		case r.Table == "eod_bars" && r.Index:
			index += r.Bytes
		case r.Name == "eod_bars" && !r.Index:
			heap += r.Bytes
		}
	}
	if ds.Bars > 0 {
		ds.HeapBytesPerBar = float64(heap) / float64(ds.Bars)
		ds.IndexBytesPerBar = float64(index) / float64(ds.Bars)
		ds.BytesPerBar = ds.HeapBytesPerBar + ds.IndexBytesPerBar
	}
	return nil
}

// storageOrder turns rows of (relation, its table or "" for a table,
// bytes) into Relations in the order of scaleTables, each table before
// its indexes, indexes by name.
func storageOrder(rows [][]string) []Relation {
	var out []Relation
	for _, table := range scaleTables {
		var idx []Relation
		for _, r := range rows {
			n, _ := strconv.ParseInt(r[2], 10, 64)
			switch {
			case r[1] == "" && r[0] == table:
				out = append(out, Relation{Name: table, Table: table, Bytes: n})
			case r[1] == table:
				idx = append(idx, Relation{Name: r[0], Table: table, Index: true, Bytes: n})
			}
		}
		slices.SortFunc(idx, func(a, b Relation) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, idx...)
	}
	return out
}
