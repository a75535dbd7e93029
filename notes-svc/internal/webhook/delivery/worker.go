package delivery

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	"gorm.io/gorm"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhook"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/webhookdb"
)

// deliverArgs is a job: one delivery of one account.
type deliverArgs struct {
	AccountID  string `json:"account_id"`
	DeliveryID string `json:"delivery_id"`
}

// Kind implements river.JobArgs.
func (deliverArgs) Kind() string { return "webhook_delivery" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (deliverArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueName} }

type deliverWorker struct {
	river.WorkerDefaults[deliverArgs]
	q *Queue
}

// Timeout bounds an attempt and the bookkeeping around it.
func (w *deliverWorker) Timeout(*river.Job[deliverArgs]) time.Duration {
	return w.q.o.Timeout + 10*time.Second
}

// NextRetry is exponential backoff with jitter, the same retryAt the
// attempt wrote into the delivery log.
func (w *deliverWorker) NextRetry(job *river.Job[deliverArgs]) time.Time {
	return w.q.retryAt(job.ID, job.Attempt, w.q.o.Now())
}

// retryAt is when the next attempt after failed attempt n of job is due:
// the backoff of n, between 75% and 125% of it, the share fixed by the job
// and attempt so that the log and River agree on it.
func (q *Queue) retryAt(jobID int64, n int, now time.Time) time.Time {
	h := fnv.New32a()
	_, _ = h.Write([]byte(strconv.FormatInt(jobID, 10) + "/" + strconv.Itoa(n)))
	share := 0.75 + 0.5*float64(h.Sum32()%1000)/1000
	return now.Add(time.Duration(float64(backoff(q.o.RetryBase, q.o.RetryCap, n)) * share))
}

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[deliverArgs]) error {
	q, a := w.q, job.Args
	store := q.o.Store
	t, err := store.Target(ctx, a.AccountID, a.DeliveryID)
	if errors.Is(err, webhook.ErrNotFound) {
		return nil // the endpoint was deleted, and its deliveries with it
	}
	if err != nil {
		return err
	}
	if t.Delivery.Status != webhook.StatusPending {
		return nil
	}
	now := q.o.Now().UTC()
	switch {
	case !t.Endpoint.Enabled:
		return store.EndDelivery(ctx, a.AccountID, a.DeliveryID, "endpoint disabled", now)
	case t.Event == nil:
		return store.EndDelivery(ctx, a.AccountID, a.DeliveryID, "event no longer in the event log", now)
	}
	release, ok, err := q.slot(ctx, t.Endpoint.ID)
	if err != nil {
		return err
	}
	if !ok {
		return river.JobSnooze(q.o.SlotWait)
	}
	defer release()
	secrets, err := webhook.OpenSecrets(q.o.Cipher, t.Endpoint, now)
	if err != nil {
		return river.JobCancel(fmt.Errorf("open endpoint secret: %w", err))
	}
	sendCtx, cancel := context.WithTimeout(ctx, q.o.Timeout)
	res := q.sender.send(sendCtx, t.Endpoint.URL, t.Delivery.EventID, t.Event, secrets, now)
	cancel()
	done := q.o.Now().UTC()
	at := webhookdb.Attempt{HTTPStatus: res.status, Latency: res.latency, Error: res.describe()}
	db := store.DB().WithContext(ctx)
	if res.ok() {
		at.Status = webhook.StatusSucceeded
		return webhookdb.RecordAttempt(db, a.AccountID, a.DeliveryID, at, done)
	}
	next := q.retryAt(job.ID, job.Attempt, done)
	failure := fmt.Errorf("webhook delivery %s: %s", a.DeliveryID, at.Error)
	if job.Attempt < job.MaxAttempts && next.Sub(t.Delivery.CreatedAt) <= q.o.MaxAge {
		at.Status, at.Next = webhook.StatusPending, &next
		if err := webhookdb.RecordAttempt(db, a.AccountID, a.DeliveryID, at, done); err != nil {
			return err
		}
		return failure
	}
	// Out of retries: the delivery fails, and the endpoint, which has
	// not answered for as long as deliveries are retried, is disabled.
	at.Status = webhook.StatusFailed
	err = db.Transaction(func(tx *gorm.DB) error {
		if err := webhookdb.RecordAttempt(tx, a.AccountID, a.DeliveryID, at, done); err != nil {
			return err
		}
		reason := "deliveries failed for " + q.o.MaxAge.String() + ": " + at.Error
		if err := webhookdb.DisableEndpointTx(tx, a.AccountID, t.Endpoint.ID, reason, done); err != nil {
			return err
		}
		return q.o.EventLog.AppendEventTx(tx, a.AccountID, webhook.TypeEndpointDisabled, disabledObject{
			ID: t.Endpoint.ID, Object: "webhook_endpoint", URL: t.Endpoint.URL, Enabled: false, DisabledReason: reason,
		})
	})
	if err != nil {
		return fmt.Errorf("disable webhook endpoint: %w", err)
	}
	q.o.Log.Warn("webhook endpoint disabled", "account_id", a.AccountID, "endpoint_id", t.Endpoint.ID, "delivery_id", a.DeliveryID)
	return river.JobCancel(failure)
}

// disabledObject is the object of a webhook_endpoint.disabled event.
type disabledObject struct {
	ID             string `json:"id"`
	Object         string `json:"object"`
	URL            string `json:"url"`
	Enabled        bool   `json:"enabled"`
	DisabledReason string `json:"disabled_reason"`
}

// slot takes one of the endpoint's PerEndpoint slots, a session advisory
// lock on a connection of its own held until release; ok is false when
// every slot is taken. A crashed process's connection closes, and its
// slots free with it.
func (q *Queue) slot(ctx context.Context, endpointID string) (release func(), ok bool, err error) {
	conn, err := q.o.DB.Conn(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("webhook slot: %w", err)
	}
	// One round trip for all the slots: the Limit stops the scan at the
	// first lock taken, so the rows after it are never tried. Trying them
	// one query each cost up to PerEndpoint round trips per attempt, and
	// capped make bench's webhook_delivery at 299 deliveries/s with 32.
	var i int
	err = conn.QueryRowContext(ctx, `SELECT s FROM generate_series(0, $2::int - 1) AS s
		WHERE pg_try_advisory_lock(hashtext($1), s) LIMIT 1`, endpointID, q.o.PerEndpoint).Scan(&i)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_ = conn.Close()
		return nil, false, nil
	case err != nil:
		_ = conn.Close()
		return nil, false, fmt.Errorf("webhook slot: %w", err)
	}
	return func() {
		// A fresh context: the job's may have ended, and a lock left on a
		// pooled connection would hold the slot.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := conn.ExecContext(uctx, "SELECT pg_advisory_unlock(hashtext($1), $2)", endpointID, i); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // drop the connection, and its lock
		}
		_ = conn.Close()
	}, true, nil
}

// maintenanceArgs is a periodic retention task.
type maintenanceArgs struct {
	Task string `json:"task"`
}

// Kind implements river.JobArgs.
func (maintenanceArgs) Kind() string { return "notes_maintenance" }

const (
	taskPurgeTrash  = "purge_trash"
	taskPruneEvents = "prune_events"
)

type maintenanceWorker struct {
	river.WorkerDefaults[maintenanceArgs]
	q *Queue
}

func (w *maintenanceWorker) Work(ctx context.Context, job *river.Job[maintenanceArgs]) error {
	o := w.q.o
	now := o.Now().UTC()
	var n int64
	var err error
	switch job.Args.Task {
	case taskPurgeTrash:
		n, err = o.Maintenance.PurgeTrash(ctx, now.Add(-o.TrashRetention))
	case taskPruneEvents:
		n, err = o.Maintenance.PruneEvents(ctx, now.Add(-o.EventRetention))
	default:
		return river.JobCancel(fmt.Errorf("unknown maintenance task %q", job.Args.Task))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", job.Args.Task, err)
	}
	o.Log.Info("maintenance done", "task", job.Args.Task, "rows", n)
	return nil
}
