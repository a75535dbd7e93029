package notes

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Refusals of an unbounded listing by a ListLimiter.
var (
	// ErrTooManyListings reports an account that already has as many
	// unbounded listings in progress as it may: the caller's own load, so
	// it should wait for one of them to end.
	ErrTooManyListings = errors.New("too many unbounded listings of the account in progress")
	// ErrListingsBusy reports a process that found no free listing slot
	// in time: the server's load, not the caller's.
	ErrListingsBusy = errors.New("no unbounded listing slot free")
)

// ListLimiter bounds the unbounded listings (no Limit) in progress, per
// account and in the process. Each one reads every note of an account and
// lasts as long as its client takes to read the answer, so without a bound
// a few slow clients could claim any amount of memory and database time.
type ListLimiter struct {
	perAccount int
	wait       time.Duration
	// slots holds one token per listing in progress in the process.
	slots chan struct{}

	mu       sync.Mutex
	accounts map[string]int

	refusedAccount, refusedBusy atomic.Uint64
}

// NewListLimiter allows perAccount listings per account and total in the
// process (each at least 1). A listing over the process bound waits up to
// wait for a slot, so that listings that merely overlap for a moment are
// not refused; one over its account's bound is refused at once.
func NewListLimiter(perAccount, total int, wait time.Duration) *ListLimiter {
	return &ListLimiter{perAccount: max(perAccount, 1), wait: max(wait, 0),
		slots: make(chan struct{}, max(total, 1)), accounts: map[string]int{}}
}

// Acquire takes a slot for a listing of account, or fails with
// ErrTooManyListings or ErrListingsBusy. release gives the slot back; it
// must be called exactly once.
func (l *ListLimiter) Acquire(ctx context.Context, account string) (release func(), err error) {
	l.mu.Lock()
	if l.accounts[account] >= l.perAccount {
		l.mu.Unlock()
		l.refusedAccount.Add(1)
		return nil, ErrTooManyListings
	}
	l.accounts[account]++
	l.mu.Unlock()
	select {
	case l.slots <- struct{}{}:
	default:
		t := time.NewTimer(l.wait)
		defer t.Stop()
		select {
		case l.slots <- struct{}{}:
		case <-t.C:
			l.leave(account)
			l.refusedBusy.Add(1)
			return nil, ErrListingsBusy
		case <-ctx.Done():
			l.leave(account)
			return nil, fmt.Errorf("%w: %w", ErrListingsBusy, ctx.Err())
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-l.slots
			l.leave(account)
		})
	}, nil
}

func (l *ListLimiter) leave(account string) {
	l.mu.Lock()
	if l.accounts[account]--; l.accounts[account] <= 0 {
		delete(l.accounts, account)
	}
	l.mu.Unlock()
}

// InProgress is the number of listings holding a slot.
func (l *ListLimiter) InProgress() int { return len(l.slots) }

// Refused counts the listings refused so far, by the account bound and by
// the process bound.
func (l *ListLimiter) Refused() (account, busy uint64) {
	return l.refusedAccount.Load(), l.refusedBusy.Load()
}
