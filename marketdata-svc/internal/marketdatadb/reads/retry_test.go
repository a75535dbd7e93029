package reads_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/reads"
)

// flaky answers EOD with errs in turn, then a page; it implements nothing
// else.
type flaky struct {
	reads.Reader
	errs  []error
	calls int
}

func (f *flaky) EOD(context.Context, marketdata.EODQuery) (marketdata.EODPage, error) {
	f.calls++
	if f.calls <= len(f.errs) {
		return marketdata.EODPage{}, f.errs[f.calls-1]
	}
	return marketdata.EODPage{Total: 7}, nil
}

func TestRetryReadsOnceAfterAFailover(t *testing.T) {
	// As the store reports them: the domain error, the driver's cause kept.
	unavailable := func(code string) error {
		return fmt.Errorf("eod: %w: %w", marketdata.ErrUnavailable, &pgconn.PgError{Code: code})
	}
	for _, tc := range []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   error
	}{
		{"primary killed, then answered", []error{unavailable("57P01")}, 2, nil},
		{"demoted primary (read-only), then answered", []error{unavailable("25006")}, 2, nil},
		{"still down after the retry", []error{unavailable("57P01"), unavailable("57P01")}, 2, marketdata.ErrUnavailable},
		{"statement timeout: not retried", []error{fmt.Errorf("eod: %w: %w", marketdata.ErrTimeout, &pgconn.PgError{Code: "57014"})}, 1, marketdata.ErrTimeout},
		{"an answer: not retried", []error{marketdata.ErrNoValidSymbols}, 1, marketdata.ErrNoValidSymbols},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{errs: tc.errs}
			page, err := reads.NewRetry(f).EOD(context.Background(), marketdata.EODQuery{})
			if f.calls != tc.wantCalls {
				t.Errorf("reads = %d, want %d", f.calls, tc.wantCalls)
			}
			if tc.wantErr == nil && (err != nil || page.Total != 7) {
				t.Errorf("got %+v, %v; want the page", page, err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestRetryStaysInsideTheDeadline(t *testing.T) {
	f := &flaky{errs: []error{fmt.Errorf("eod: %w: %w", marketdata.ErrUnavailable, &pgconn.PgError{Code: "57P01"})}}
	// Less than two pauses left: the request cannot afford a second try.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := reads.NewRetry(f).EOD(ctx, marketdata.EODQuery{}); !errors.Is(err, marketdata.ErrUnavailable) || f.calls != 1 {
		t.Errorf("reads = %d, err = %v; want one read and its error", f.calls, err)
	}
}
