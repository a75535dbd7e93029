// Package delivery sends webhooks on River, PostgreSQL's job queue, in the
// notes database. The event log is the transactional outbox: a note's
// change and its event commit together, and the relay (RelayOnce, in
// every replica, one at a time on its position's row lock) turns the
// events it passes into deliveries and River jobs, in one transaction
// with the move of its position, so that no event is relayed twice or
// left behind. A worker in every replica makes the attempts (River hands
// each job to one worker), and the leader replica alone runs the periodic
// maintenance (trash purge and event retention).
//
// The relay, rather than a job inserted in each write's transaction,
// because the write then stays the one statement of the note and its
// event: with the delivery insert and River's in a transaction of its
// own, a note created cost four round trips instead of one, and make
// bench's notes_post fell to 0.40-0.49 of the minimal server (3 rounds,
// loaded machine). The relay adds at most RelayInterval to the lag.
//
// Deliveries are at least once and in no set order: a receiver
// deduplicates on the event id. An attempt is a POST through the egress
// guard; 2xx is delivered, anything else (a redirect included) or no
// answer is retried with exponential backoff and jitter until MaxAge,
// after which the delivery fails, its endpoint is disabled and a
// webhook_endpoint.disabled event is appended. At most PerEndpoint
// attempts to one endpoint run at once across replicas (session advisory
// locks on the endpoint's slots; River has no per-key limit): a job that
// finds no free slot snoozes, which costs no attempt.
package delivery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
	"gorm.io/gorm"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook/egress"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhookdb"
)

// QueueName is the name of River's queue of deliveries.
const QueueName = "webhooks"

// EventLog appends an event to the account's event log in tx; notesdb's
// Store implements it.
type EventLog interface {
	AppendEventTx(tx *gorm.DB, accountID, eventType string, object any) error
}

// Maintenance is the retention work the leader runs hourly; notesdb
// implements it.
type Maintenance interface {
	PurgeTrash(ctx context.Context, before time.Time) (int64, error)
	PruneEvents(ctx context.Context, before time.Time) (int64, error)
}

// Options configure a Queue. Zero values take the defaults noted.
type Options struct {
	DB       *sql.DB
	Store    *webhookdb.Store
	Cipher   *webhook.Cipher
	Guard    *egress.Guard
	EventLog EventLog
	// Maintenance, when set, runs hourly (and once at start) on the
	// leader, with TrashRetention and EventRetention.
	Maintenance    Maintenance
	TrashRetention time.Duration
	EventRetention time.Duration
	// Workers bounds the attempts in progress in the process (10); each
	// holds a database connection for its slot lock while it sends.
	Workers int
	// PerEndpoint bounds the attempts to one endpoint at once, across
	// replicas (4).
	PerEndpoint int
	// Timeout bounds one attempt (10 s).
	Timeout time.Duration
	// RetryBase is the first retry's delay (30 s), doubled each attempt up
	// to RetryCap (6 h), each with ±25% jitter; MaxAge (72 h) ends the
	// retries, and MaxAttempts follows from the three unless set.
	RetryBase   time.Duration
	RetryCap    time.Duration
	MaxAge      time.Duration
	MaxAttempts int
	// SlotWait is how long a job that found no free slot snoozes (1 s).
	SlotWait time.Duration
	// PollInterval is how often idle workers look for jobs (200 ms); the
	// database/sql driver has no LISTEN. RelayInterval is how often an
	// idle relay looks for new events (100 ms). Together they bound the
	// lag from a commit to its delivery's first attempt.
	PollInterval  time.Duration
	RelayInterval time.Duration
	UserAgent     string
	Log           *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Timeout, 10*time.Second)
	def(&o.RetryBase, 30*time.Second)
	def(&o.RetryCap, 6*time.Hour)
	def(&o.MaxAge, 72*time.Hour)
	def(&o.SlotWait, time.Second)
	def(&o.PollInterval, 200*time.Millisecond)
	def(&o.RelayInterval, 100*time.Millisecond)
	def(&o.TrashRetention, 30*24*time.Hour)
	def(&o.EventRetention, 30*24*time.Hour)
	if o.Workers <= 0 {
		o.Workers = 10
	}
	if o.PerEndpoint <= 0 {
		o.PerEndpoint = 4
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = attemptsWithin(o.RetryBase, o.RetryCap, o.MaxAge)
	}
	if o.UserAgent == "" {
		o.UserAgent = "Tickerdesk-Webhooks/1"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// attemptsWithin is how many attempts the backoff (without jitter) makes
// within maxAge: the first at once, then after base, 2 base, ... capped.
func attemptsWithin(base, cap, maxAge time.Duration) int {
	n, elapsed := 1, time.Duration(0)
	for {
		elapsed += backoff(base, cap, n)
		if elapsed > maxAge || n >= 1000 {
			return n
		}
		n++
	}
}

// backoff is the delay after failed attempt n (from 1), before jitter.
func backoff(base, cap time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < cap; i++ {
		d *= 2
	}
	return min(d, cap)
}

// Queue enqueues and sends webhook deliveries.
type Queue struct {
	o      Options
	client *river.Client[*sql.Tx]
	sender *sender
	// stopRelay ends the relay Start runs; relayDone closes when it has.
	stopRelay context.CancelFunc
	relayDone chan struct{}
}

// New returns a Queue; Start runs its workers.
func New(o Options) (*Queue, error) {
	if o.DB == nil || o.Store == nil || o.Guard == nil || o.EventLog == nil || o.Log == nil {
		return nil, errors.New("new webhook queue: DB, Store, Guard, EventLog and Log are required")
	}
	o.defaults()
	q := &Queue{o: o, sender: &sender{client: o.Guard.Client(o.Timeout), userAgent: o.UserAgent}}
	workers := river.NewWorkers()
	river.AddWorker(workers, &deliverWorker{q: q})
	cfg := &river.Config{
		// River fetches jobs at most once per cooldown while busy, up to
		// the free workers each time: at its default 100 ms a queue of
		// Workers attempts went out at no more than Workers x 10 a second
		// (299 deliveries/s with 32 in make bench). An idle queue still
		// polls at PollInterval.
		Queues: map[string]river.QueueConfig{QueueName: {MaxWorkers: o.Workers, FetchCooldown: min(10*time.Millisecond, o.PollInterval)},
			river.QueueDefault: {MaxWorkers: 1}},
		Workers:           workers,
		FetchPollInterval: o.PollInterval,
		FetchCooldown:     min(100*time.Millisecond, o.PollInterval),
		MaxAttempts:       o.MaxAttempts,
		// A job left running by a killed process is retried once it has
		// run this long: River's default (1 h) held the deliveries of a
		// crashed replica back for an hour. It must outlast the longest a
		// live job runs, an attempt (Timeout + 10 s) or a maintenance job
		// (River's 1 min), or a job still at work would run twice.
		RescueStuckJobsAfter: max(o.Timeout+10*time.Second, time.Minute) + 10*time.Second,
		Logger:               o.Log.With("component", "river"),
	}
	if o.Maintenance != nil {
		river.AddWorker(workers, &maintenanceWorker{q: q})
		for _, task := range []string{taskPurgeTrash, taskPruneEvents} {
			cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
				func() (river.JobArgs, *river.InsertOpts) { return maintenanceArgs{Task: task}, nil },
				&river.PeriodicJobOpts{ID: task, RunOnStart: true}))
		}
	}
	client, err := river.NewClient(riverdatabasesql.New(o.DB), cfg)
	if err != nil {
		return nil, fmt.Errorf("new webhook queue: %w", err)
	}
	q.client = client
	return q, nil
}

// Start runs the workers (and, on the elected leader, the periodic jobs)
// until Stop.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.client.Start(ctx); err != nil {
		return fmt.Errorf("start webhook queue: %w", err)
	}
	relayCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	q.stopRelay, q.relayDone = stop, make(chan struct{})
	go func() {
		defer close(q.relayDone)
		q.relay(relayCtx)
	}()
	return nil
}

// StartWhenReady starts the queue, trying again every few seconds while
// the database cannot be reached (River's Start needs it), until ctx ends:
// the service starts, and serves, before PostgreSQL is up, and its
// workers join when it is.
func (q *Queue) StartWhenReady(ctx context.Context) {
	for {
		err := q.Start(context.WithoutCancel(ctx))
		if err == nil {
			return
		}
		q.o.Log.Warn("webhook queue not started; retrying", "error", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(3 * time.Second):
		}
	}
}

// Stop lets the attempts in progress finish, within ctx: graceful, like
// the HTTP server's drain.
func (q *Queue) Stop(ctx context.Context) error {
	if q.stopRelay != nil {
		q.stopRelay()
		<-q.relayDone
	}
	if err := q.client.Stop(ctx); err != nil {
		return fmt.Errorf("stop webhook queue: %w", err)
	}
	return nil
}

// Migrate brings River's own tables up to date; `notes-svc migrate` runs
// it after the service's migrations.
func Migrate(ctx context.Context, db *sql.DB, log *slog.Logger) error {
	m, err := rivermigrate.New(riverdatabasesql.New(db), &rivermigrate.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	for _, v := range res.Versions {
		log.Info("river migration applied", "version", v.Version, "duration_ms", v.Duration.Milliseconds())
	}
	return nil
}

// sqlTx finds the *sql.Tx under a GORM transaction, for River to insert
// its jobs in the same transaction as the deliveries they send. No GORM
// session here prepares statements (pgx's statement cache does), so the
// transaction is database/sql's own.
func sqlTx(tx *gorm.DB) (*sql.Tx, error) {
	if t, ok := tx.Statement.ConnPool.(*sql.Tx); ok {
		return t, nil
	}
	return nil, errors.New("webhook outbox: not in a database/sql transaction")
}

func txContext(tx *gorm.DB) context.Context {
	if tx.Statement != nil && tx.Statement.Context != nil {
		return tx.Statement.Context
	}
	return context.Background()
}

// relayBatch bounds the events one relay transaction passes.
const relayBatch = 500

// RelayOnce passes the next events of the log (at most relayBatch): in
// one transaction, their deliveries are written, each gets a River job,
// and the relay's position moves past them. It reports how many events
// it passed. Replicas take turns on the position's row lock.
func (q *Queue) RelayOnce(ctx context.Context) (int, error) {
	var passed int
	err := q.o.Store.DB().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ds, n, err := webhookdb.RelayTx(tx, relayBatch, q.o.Now().UTC())
		if err != nil {
			return err
		}
		passed = n
		if len(ds) == 0 {
			return nil
		}
		return q.insertJobs(tx, ds)
	})
	return passed, err
}

// relay runs RelayOnce until ctx ends: again at once while batches come
// full, otherwise after RelayInterval, and after a failure (the database
// away) after a wait that doubles up to a few seconds, so that an outage
// costs a log line every few seconds, not ten a second.
func (q *Queue) relay(ctx context.Context) {
	wait := q.o.RelayInterval
	for {
		n, err := q.RelayOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			q.o.Log.Warn("relay webhook events", "error", err.Error())
			wait = min(2*wait, 5*time.Second)
		case err == nil && n == relayBatch:
			continue
		case err == nil:
			wait = q.o.RelayInterval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (q *Queue) insertJobs(tx *gorm.DB, ds []webhookdb.Relayed) error {
	t, err := sqlTx(tx)
	if err != nil {
		return err
	}
	params := make([]river.InsertManyParams, len(ds))
	for i, d := range ds {
		params[i] = river.InsertManyParams{Args: deliverArgs{AccountID: d.AccountID, DeliveryID: d.ID}}
	}
	if _, err := q.client.InsertManyTx(txContext(tx), t, params); err != nil {
		return fmt.Errorf("enqueue webhook deliveries: %w", err)
	}
	return nil
}

// Redeliver implements webhook.Redeliverer: the delivery is pending again
// and a new job sends it.
func (q *Queue) Redeliver(ctx context.Context, accountID, endpointID, deliveryID string) error {
	return q.o.Store.DB().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := webhookdb.ResetDeliveryTx(tx, accountID, endpointID, deliveryID, q.o.Now().UTC()); err != nil {
			return err
		}
		return q.insertJobs(tx, []webhookdb.Relayed{{ID: deliveryID, AccountID: accountID}})
	})
}
