// Package replicas routes the API's reads to PostgreSQL streaming replicas
// of the primary (MARKETDATA_DATABASE_REPLICA_URLS), as a decorator: a
// Router takes the reads of each database (reads.Store on its pool) and is
// itself the reads the service puts under its cache, the same interface in
// and out.
//
// Router sends the API's reads (EOD, intraday, tickers, exchanges,
// splits, dividends, indices) to the replicas in turn, and to the primary
// when none is usable. Everything else (imports, keys, the data version,
// migrations, readiness) stays on the primary's marketdatadb.Store.
//
// A replica is usable when its last health check succeeded and it has
// replayed the highest data version the process has seen: the version in
// force (the caches' key), or a newer one that a read has already been
// answered at. Every import bumps the version in the transaction that
// writes its rows, so a replica whose data_version row is at least that
// version has replayed the import's commit record (its
// pg_last_wal_replay_lsn is past the commit's LSN): rows it serves are
// never older than the version they are cached under, nor than any
// answer the process gave before. A replica that lags is skipped, not
// waited for, until a check finds it caught up. Replica versions only
// grow, so a stale check can only skip a replica too long, never use one
// too early.
//
// Versions never go back. After every read, the version of the database
// that answered it (replica or primary) is read too, one cheap query on
// the same server; read after the rows, it is at least the version they
// were read at. The highest such version joins the requirement at once
// (and Options.Observe passes it on to the caches' version), so while an
// import waits for its replicas before it publishes, a replica that has
// replayed it makes every other one still behind it unusable: readers
// never alternate between the new rows and the old.
//
// A sick replica costs little, once. A read on a replica has its own
// deadline, ReadTimeout (1 s by default, far below the request's), and is
// retried on the primary when it passes, within the request's own
// deadline. A replica whose read timed out or failed with a connection
// error is out of rotation for a backoff (CheckInterval, doubling with
// each consecutive failure up to maxBackoff) and then probed back in by
// the health check; its first successful read clears the count. So a
// frozen replica (a stopped process, a stalled host) costs the reads in
// flight on it ReadTimeout once, and none after; any other failed read on
// a replica (cancelled by a recovery conflict, say) is retried once on the
// primary as well, so the client does not see it. Domain answers (unknown
// symbol, not found) are answers, not failures.
//
// The checks: one cheap query per replica every CheckInterval (1 s by
// default), at once when the required version rises, and every
// LagInterval (50 ms) while a replica that is up lags behind it.
//
// Imports wait for the replicas before they publish a version
// (WaitReplayed), so that after a publish the replicas usually serve at
// once; one still behind after the bound is skipped by the rule above.
package replicas

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
)

// Reads is what the router routes and what it is: the API's reads, as the
// cache and the handlers consume them.
type Reads interface {
	marketdata.Store
	marketdata.IntradayStore
}

// Node is one database the router reads from.
type Node struct {
	// Database is the database itself: its pool runs the health checks
	// and reads the data version and the WAL position.
	Database *marketdatadb.Store
	// Reads answers the API's reads on Database (reads.New of its pool).
	Reads Reads
}

// Defaults of Options.
const (
	DefaultCheckInterval = time.Second
	DefaultLagInterval   = 50 * time.Millisecond
	DefaultReadTimeout   = time.Second
	// maxBackoff bounds how long a replica whose reads fail stays out
	// of rotation before it is probed again.
	maxBackoff = 30 * time.Second
	// checkTimeout bounds one health check: a replica slower than this
	// to answer "SELECT 1"-cheap queries is no help to readers.
	checkTimeout = time.Second
)

// Options configure a Router.
type Options struct {
	// Version returns the data version in force (the caches' version,
	// dataversion.Source.Current); ok is false while it is unknown, and
	// then the highest version seen so far is required. Nil requires no
	// version: any replica that answers is used (tests of routing alone).
	Version func() (v int64, ok bool)
	// CheckInterval is the period of the health checks; DefaultCheckInterval
	// when zero.
	CheckInterval time.Duration
	// LagInterval is the period of the checks while a replica lags;
	// DefaultLagInterval when zero.
	LagInterval time.Duration
	// ReadTimeout bounds a read on a replica, after which it is retried
	// on the primary; DefaultReadTimeout when zero.
	ReadTimeout time.Duration
	// Observe, when set, is told every data version a read was answered
	// at (dataversion.Source.Observe), so that the caches never key on an
	// older version than an answer already given.
	Observe func(v int64)
	Logger  *slog.Logger
}

// Router routes reads to replicas of the primary. It implements Reads
// (marketdata.Store and marketdata.IntradayStore) and is safe for
// concurrent use. Keep Run running.
type Router struct {
	primary  Node
	replicas []*replica
	o        Options
	// floor is the highest data version seen (in force, or answered
	// at): a replica must have replayed it to be read.
	floor atomic.Int64
	next  atomic.Uint64
	kick  chan struct{}

	primaryReads, replicaReads, fallbacks atomic.Int64
}

type replica struct {
	node Node
	name string // host:port, for logs
	up   atomic.Bool
	// version is the data version the replica had replayed at its last
	// check, -1 before the first.
	version atomic.Int64
	// lsn is pg_last_wal_replay_lsn at the last check.
	lsn   atomic.Uint64
	reads atomic.Int64
	// failures counts consecutive failed reads (timed out, connection
	// lost); downUntil (unix nanos) is when the health check may bring
	// the replica back after the last one.
	failures  atomic.Int64
	downUntil atomic.Int64
	// state is the last logged state, so that changes are logged once.
	mu    sync.Mutex
	state string
}

// Open opens a pool on each of cfg.DatabaseReplicaURLs, with the
// primary's pool limits and timeouts, and returns a Router over their
// reads and primary's. It does not connect: a replica down at start is
// skipped until it answers. Close closes the replicas' pools, not the
// primary's.
func Open(cfg config.Config, primary Node, tracer pgx.QueryTracer, o Options) (*Router, error) {
	nodes := make([]Node, 0, len(cfg.DatabaseReplicaURLs))
	for i, u := range cfg.DatabaseReplicaURLs {
		db, err := marketdatadb.OpenReplica(cfg, u, tracer)
		if err != nil {
			for _, n := range nodes {
				n.Database.Close() // #nosec G104 -- best-effort close on a path that already returns the error
			}
			return nil, fmt.Errorf("open replica %d: %w", i+1, err)
		}
		nodes = append(nodes, Node{Database: db, Reads: reads.New(db.DB())})
	}
	return New(primary, nodes, o), nil
}

// New returns a Router routing reads to replicas, falling back to
// primary. Every replica starts unchecked, hence unused: call Check or Run.
func New(primary Node, replicas []Node, o Options) *Router {
	if o.CheckInterval <= 0 {
		o.CheckInterval = DefaultCheckInterval
	}
	if o.LagInterval <= 0 {
		o.LagInterval = DefaultLagInterval
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	r := &Router{primary: primary, o: o, kick: make(chan struct{}, 1)}
	r.floor.Store(-1)
	for _, n := range replicas {
		rep := &replica{node: n, name: n.Database.Addr()}
		rep.version.Store(-1)
		r.replicas = append(r.replicas, rep)
	}
	return r
}

// Close closes the replicas' pools.
func (r *Router) Close() error {
	var errs []error
	for _, rep := range r.replicas {
		errs = append(errs, rep.node.Database.Close())
	}
	return errors.Join(errs...)
}

// Pools returns the replicas' connection pools, for metrics collectors
// (sql.DBStats).
func (r *Router) Pools() []*sql.DB {
	pools := make([]*sql.DB, len(r.replicas))
	for i, rep := range r.replicas {
		pools[i] = rep.node.Database.DB()
	}
	return pools
}

// Stats counts where reads went.
type Stats struct {
	// PrimaryReads were sent to the primary because no replica was usable.
	PrimaryReads int64
	// ReplicaReads were answered by a replica.
	ReplicaReads int64
	// Fallbacks failed on a replica and were retried on the primary.
	Fallbacks int64
	// Usable is how many replicas reads may go to now.
	Usable int
}

// Stats reports where reads went since the Router was made.
func (r *Router) Stats() Stats {
	st := Stats{PrimaryReads: r.primaryReads.Load(), ReplicaReads: r.replicaReads.Load(), Fallbacks: r.fallbacks.Load()}
	need := r.required()
	for _, rep := range r.replicas {
		if rep.usable(need) {
			st.Usable++
		}
	}
	return st
}

func (rep *replica) usable(need int64) bool {
	return rep.up.Load() && rep.version.Load() >= need
}

// required is the data version a replica must have replayed to be read.
// A rise of the version in force triggers a check at once, so a replica
// that has caught up is used again without waiting for the period.
func (r *Router) required() int64 {
	if r.o.Version != nil {
		if v, ok := r.o.Version(); ok {
			r.raise(v)
		}
	}
	return r.floor.Load()
}

// raise makes v the required version if it is higher, and then checks the
// replicas at once.
func (r *Router) raise(v int64) {
	for {
		cur := r.floor.Load()
		if v <= cur {
			return
		}
		if r.floor.CompareAndSwap(cur, v) {
			select {
			case r.kick <- struct{}{}:
			default:
			}
			return
		}
	}
}

// answeredOn reads the data version of db (rep's database, or the
// primary's when rep is nil) after a read it answered: the answer was at
// that version or older, and no later read may be older. Without versions
// (Options.Version nil: routing alone), it does nothing.
func (r *Router) answeredOn(ctx context.Context, rep *replica, db *marketdatadb.Store) {
	if r.o.Version == nil {
		return
	}
	v, err := db.DataVersion(ctx)
	if err != nil {
		return // the next health check tells
	}
	if rep != nil {
		for cur := rep.version.Load(); v > cur && !rep.version.CompareAndSwap(cur, v); cur = rep.version.Load() {
		}
	}
	r.raise(v)
	if r.o.Observe != nil {
		r.o.Observe(v)
	}
}

// pick returns the next usable replica in turn, or nil.
func (r *Router) pick() *replica {
	n := uint64(len(r.replicas))
	if n == 0 {
		return nil
	}
	need := r.required()
	start := r.next.Add(1)
	for i := range n {
		if rep := r.replicas[(start+i)%n]; rep.usable(need) {
			return rep
		}
	}
	return nil
}

// routed runs read of q (a method of Reads) on a usable replica, with the
// replica's own deadline, else on the primary; a read that fails on a
// replica is retried on the primary. The version of the server that
// answered is read after the rows, so that no later read is answered from
// an older one.
func routed[Q, T any](ctx context.Context, r *Router, q Q, read func(Reads, context.Context, Q) (T, error)) (T, error) {
	rep := r.pick()
	if rep == nil {
		r.primaryReads.Add(1)
		return onPrimary(ctx, r, q, read)
	}
	rctx, cancel := context.WithTimeout(ctx, r.o.ReadTimeout)
	defer cancel()
	v, err := read(rep.node.Reads, rctx, q)
	if err == nil || answered(err) {
		rep.reads.Add(1)
		r.replicaReads.Add(1)
		rep.failures.Store(0)
		r.answeredOn(rctx, rep, rep.node.Database)
		return v, err
	}
	if ctx.Err() != nil { // the request itself is over
		return v, err
	}
	if rctx.Err() != nil || errors.Is(err, marketdata.ErrUnavailable) {
		r.trip(rep, err)
	}
	r.fallbacks.Add(1)
	return onPrimary(ctx, r, q, read)
}

// onPrimary runs read of q on the primary and records the version it
// answered at (see routed).
func onPrimary[Q, T any](ctx context.Context, r *Router, q Q, read func(Reads, context.Context, Q) (T, error)) (T, error) {
	v, err := read(r.primary.Reads, ctx, q)
	if err == nil || answered(err) {
		r.answeredOn(ctx, nil, r.primary.Database)
	}
	return v, err
}

// trip takes rep out of rotation after a failed read, for a backoff that
// doubles with each consecutive failure; the health check probes it back
// in afterwards. The reads that were in flight together when it failed
// count as one failure: the first takes it out.
func (r *Router) trip(rep *replica, err error) {
	if !rep.up.CompareAndSwap(true, false) {
		return
	}
	n := rep.failures.Add(1)
	backoff := maxBackoff
	if n <= 16 {
		backoff = min(r.o.CheckInterval<<(n-1), maxBackoff)
	}
	rep.downUntil.Store(time.Now().Add(backoff).UnixNano())
	r.logState(rep, "down", err)
}

// answered tells a domain answer, which the primary would give as well,
// from a failure.
func answered(err error) bool {
	return errors.Is(err, marketdata.ErrNoValidSymbols) || errors.Is(err, marketdata.ErrNotFound)
}

// The API's reads, each routed to a replica or the primary.

// EOD reads q from a replica, else the primary.
func (r *Router) EOD(ctx context.Context, q marketdata.EODQuery) (marketdata.EODPage, error) {
	return routed(ctx, r, q, Reads.EOD)
}

// Intraday reads q from a replica, else the primary.
func (r *Router) Intraday(ctx context.Context, q marketdata.IntradayQuery) (marketdata.IntradayPage, error) {
	return routed(ctx, r, q, Reads.Intraday)
}

// Ticker reads one ticker from a replica, else the primary.
func (r *Router) Ticker(ctx context.Context, symbol string) (marketdata.Ticker, error) {
	return routed(ctx, r, symbol, Reads.Ticker)
}

// Tickers reads q from a replica, else the primary.
func (r *Router) Tickers(ctx context.Context, q marketdata.TickerQuery) (marketdata.TickerPage, error) {
	return routed(ctx, r, q, Reads.Tickers)
}

// Exchange reads one exchange from a replica, else the primary.
func (r *Router) Exchange(ctx context.Context, mic string) (marketdata.Exchange, error) {
	return routed(ctx, r, mic, Reads.Exchange)
}

// Exchanges reads q from a replica, else the primary.
func (r *Router) Exchanges(ctx context.Context, q marketdata.ExchangeQuery) (marketdata.ExchangePage, error) {
	return routed(ctx, r, q, Reads.Exchanges)
}

// Splits reads q from a replica, else the primary.
func (r *Router) Splits(ctx context.Context, q marketdata.ActionQuery) (marketdata.SplitPage, error) {
	return routed(ctx, r, q, Reads.Splits)
}

// Dividends reads q from a replica, else the primary.
func (r *Router) Dividends(ctx context.Context, q marketdata.ActionQuery) (marketdata.DividendPage, error) {
	return routed(ctx, r, q, Reads.Dividends)
}

// Indices reads q from a replica, else the primary.
func (r *Router) Indices(ctx context.Context, q marketdata.IndexQuery) (marketdata.IndexPage, error) {
	return routed(ctx, r, q, Reads.Indices)
}

// LoadedDatasets reads which datasets hold rows from a replica, else the
// primary.
func (r *Router) LoadedDatasets(ctx context.Context) (marketdata.LoadedDatasets, error) {
	return routed(ctx, r, struct{}{}, func(rd Reads, ctx context.Context, _ struct{}) (marketdata.LoadedDatasets, error) {
		return rd.LoadedDatasets(ctx)
	})
}

// Commodity reads one commodity from a replica, else the primary.
func (r *Router) Commodity(ctx context.Context, name string) (marketdata.CommoditySeries, error) {
	return routed(ctx, r, name, Reads.Commodity)
}

// CompanyRatings reads a symbol's ratings from a replica, else the
// primary.
func (r *Router) CompanyRatings(ctx context.Context, symbol string) ([]marketdata.Rating, error) {
	return routed(ctx, r, symbol, Reads.CompanyRatings)
}

// BondCountries reads a page of bond countries from a replica, else the
// primary.
func (r *Router) BondCountries(ctx context.Context, p marketdata.ListPage) (marketdata.NamePage, error) {
	return routed(ctx, r, p, Reads.BondCountries)
}

// BondYields reads a country's yields from a replica, else the primary.
func (r *Router) BondYields(ctx context.Context, country string) ([]marketdata.BondYield, error) {
	return routed(ctx, r, country, Reads.BondYields)
}

// ETFs reads a page of ETF tickers from a replica, else the primary.
func (r *Router) ETFs(ctx context.Context, p marketdata.ListPage) (marketdata.NamePage, error) {
	return routed(ctx, r, p, Reads.ETFs)
}

// ETFHoldings reads an ETF's filing from a replica, else the primary.
func (r *Router) ETFHoldings(ctx context.Context, q marketdata.ETFQuery) (marketdata.ETFFilingHoldings, error) {
	return routed(ctx, r, q, Reads.ETFHoldings)
}

// EDGARCompanies reads a page of EDGAR companies from a replica, else the
// primary.
func (r *Router) EDGARCompanies(ctx context.Context, q marketdata.EDGARQuery) (marketdata.EDGARPage, error) {
	return routed(ctx, r, q, Reads.EDGARCompanies)
}

// EDGARCompany reads one EDGAR company from a replica, else the primary.
func (r *Router) EDGARCompany(ctx context.Context, cik string) (marketdata.EDGARCompany, error) {
	return routed(ctx, r, cik, Reads.EDGARCompany)
}

// Frame reads a frame's facts from a replica, else the primary.
func (r *Router) Frame(ctx context.Context, q marketdata.FrameQuery) ([]marketdata.FramePoint, error) {
	return routed(ctx, r, q, Reads.Frame)
}

// The router is the reads it wraps: a method of marketdata.Store that it
// does not route fails the build here.
var _ Reads = (*Router)(nil)

// replicaCheckSQL is the health check: cheap, and it reads the data
// version the replica has replayed.
const replicaCheckSQL = `SELECT coalesce(pg_last_wal_replay_lsn()::text, ''), (SELECT version FROM data_version)`

// Check checks every replica now: it marks each up or down and records the
// data version it has replayed. It reports whether one that is up lags
// behind the version in force.
func (r *Router) Check(ctx context.Context) (lagging bool) {
	need := r.required()
	var wg sync.WaitGroup
	var lag atomic.Bool
	for _, rep := range r.replicas {
		if time.Now().UnixNano() < rep.downUntil.Load() {
			continue // out of rotation after failed reads: not probed yet
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			var lsn string
			var v int64
			err := rep.node.Database.DB().QueryRowContext(cctx, replicaCheckSQL).Scan(&lsn, &v)
			if err != nil {
				rep.up.Store(false)
				if ctx.Err() == nil {
					r.logState(rep, "down", marketdatadb.Translate(err))
				}
				return
			}
			if pos, ok := parseLSN(lsn); ok {
				rep.lsn.Store(pos)
			}
			rep.version.Store(v)
			rep.up.Store(true)
			if v < need {
				lag.Store(true)
				r.logState(rep, "lagging", nil)
				return
			}
			r.logState(rep, "up", nil)
		})
	}
	wg.Wait()
	return lag.Load()
}

// States reports each replica, in the order configured, for /readyz:
// "ok" (up and caught up with the version in force), "behind" (up, but
// behind that version) or "unavailable" (down, or out of rotation after
// failed reads). A replica never fails readiness: reads fall back to the
// primary.
func (r *Router) States() []string {
	need := r.required()
	out := make([]string, len(r.replicas))
	for i, rep := range r.replicas {
		switch {
		case !rep.up.Load() || time.Now().UnixNano() < rep.downUntil.Load():
			out[i] = "unavailable"
		case rep.version.Load() < need:
			out[i] = "behind"
		default:
			out[i] = "ok"
		}
	}
	return out
}

// Run checks the replicas until ctx ends: every CheckInterval, at once
// when the version in force rises, and every LagInterval while one lags.
func (r *Router) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-r.kick:
		}
		wait := r.o.CheckInterval
		if r.Check(ctx) {
			wait = r.o.LagInterval
		}
		timer.Reset(wait)
	}
}

// logState logs a replica's change of state (up, down, lagging) once.
func (r *Router) logState(rep *replica, state string, err error) {
	rep.mu.Lock()
	changed := rep.state != state
	rep.state = state
	rep.mu.Unlock()
	if !changed || r.o.Logger == nil {
		return
	}
	lsn := rep.lsn.Load()
	attrs := []any{"replica", rep.name, "replayed_version", rep.version.Load(), "required_version", r.floor.Load(),
		"replay_lsn", fmt.Sprintf("%X/%X", lsn>>32, lsn&0xFFFFFFFF)}
	switch state {
	case "down":
		r.o.Logger.Warn("database replica down: its reads go to the primary", append(attrs, "err", err)...)
	case "lagging":
		r.o.Logger.Warn("database replica behind the data version in force: skipped until it catches up", attrs...)
	default:
		r.o.Logger.Info("database replica serving reads", attrs...)
	}
}

// ReplayWait reports WaitReplayed.
type ReplayWait struct {
	// LSN is the primary's WAL position that was waited for.
	LSN string
	// Lagging names the replicas (host:port) that had not replayed LSN
	// within the bound, or could not be asked.
	Lagging []string
	// Elapsed is how long the wait took.
	Elapsed time.Duration
}

// replayPoll is how often WaitReplayed asks a replica for its position.
const replayPoll = 10 * time.Millisecond

// WaitReplayed reads the primary's current WAL position (after an
// import's commit, the position of its commit record or later) and waits,
// at most bound, until every replica has replayed past it. Replicas still
// behind after the bound are reported in Lagging: the caller goes on, and
// readers skip them until they have replayed the new data version. An
// error means the primary's position could not be read.
func (r *Router) WaitReplayed(ctx context.Context, bound time.Duration) (ReplayWait, error) {
	start := time.Now()
	var w ReplayWait
	if err := r.primary.Database.DB().QueryRowContext(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&w.LSN); err != nil {
		return w, fmt.Errorf("wait for replicas: %w", marketdatadb.Translate(err))
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, rep := range r.replicas {
		wg.Go(func() {
			if !rep.waitReplayed(ctx, w.LSN) {
				mu.Lock()
				w.Lagging = append(w.Lagging, rep.name)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	w.Elapsed = time.Since(start)
	return w, nil
}

func (rep *replica) waitReplayed(ctx context.Context, lsn string) bool {
	tick := time.NewTicker(replayPoll)
	defer tick.Stop()
	for {
		var done bool
		err := rep.node.Database.DB().QueryRowContext(ctx, "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)", lsn).Scan(&done)
		if err == nil && done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// parseLSN reads PostgreSQL's text form of a WAL position, "16/B374D848".
func parseLSN(s string) (uint64, bool) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok {
		return 0, false
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return h<<32 | l, true
}
