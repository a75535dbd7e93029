package httpedge

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlineCtx is a request's context with the request's deadline. The
// timer that enforces the deadline starts only when something first waits
// on the context (Done or Err): the database and Redis clients do, while an
// answer served from memory never does and so never arms a timer.
//
// context.WithTimeout arms one on every request: a timer in the runtime's
// heap, a registration with the request's own context, and the removal of
// both when the request ends. Under wrk that was 3% of an in-memory EOD
// hit's CPU; BenchmarkTimeout has the figures.
//
// Once armed, the context is context.WithDeadline's, and Value answers
// through it, so that contexts derived from this one register with it
// directly (context's own fast path) instead of each watching it from a
// goroutine.
type deadlineCtx struct {
	// Context is the request's context: values, and cancellation until
	// the context is armed.
	context.Context
	deadline time.Time
	// ended is what the context becomes when the request ends unarmed:
	// canceled, as context.WithTimeout's would be.
	ended *armedCtx

	mu    sync.Mutex // serialises arming and ending
	armed atomic.Pointer[armedCtx]
	// own is the armed state, kept in the same allocation.
	own armedCtx
}

// armedCtx is the context a deadlineCtx answers through once armed: ctx
// is nil when the request ended before anything waited on it.
type armedCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   <-chan struct{}
}

// endedCtx returns the state of a deadlineCtx whose request ended before
// it was armed; one serves every request of a Timeout middleware.
func endedCtx() *armedCtx {
	done := make(chan struct{})
	close(done)
	return &armedCtx{done: done}
}

// Deadline reports the request's deadline without arming the timer.
func (d *deadlineCtx) Deadline() (time.Time, bool) { return d.deadline, true }

// Done arms the deadline and returns the channel that closes when it
// passes, when the request's context is canceled, or when the request ends.
func (d *deadlineCtx) Done() <-chan struct{} { return d.arm().done }

// Err arms the deadline and reports why Done closed, if it has.
func (d *deadlineCtx) Err() error {
	a := d.arm()
	if a.ctx == nil {
		return context.Canceled
	}
	return a.ctx.Err()
}

// Value answers from the armed context once there is one, so that
// context.WithCancel and its kind find its cancellation there.
func (d *deadlineCtx) Value(key any) any {
	if a := d.armed.Load(); a != nil && a.ctx != nil {
		return a.ctx.Value(key)
	}
	return d.Context.Value(key)
}

func (d *deadlineCtx) arm() *armedCtx {
	if a := d.armed.Load(); a != nil {
		return a
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if a := d.armed.Load(); a != nil {
		return a
	}
	ctx, cancel := context.WithDeadline(d.Context, d.deadline)
	d.own = armedCtx{ctx: ctx, cancel: cancel, done: ctx.Done()}
	d.armed.Store(&d.own)
	return &d.own
}

// end cancels the context when its request ends: the armed one's timer
// stops, and an unarmed one answers as canceled from then on.
func (d *deadlineCtx) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if a := d.armed.Load(); a != nil {
		a.cancel()
		return
	}
	d.armed.Store(d.ended)
}
