package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("query notes: %w", &pgconn.PgError{Code: code}) }
	cases := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, Other},
		{"statement timeout", pg("57014"), Timeout},
		{"lock not available", pg("55P03"), Timeout},
		{"admin shutdown", pg("57P01"), Unavailable},
		{"crash shutdown", pg("57P02"), Unavailable},
		{"cannot connect now", pg("57P03"), Unavailable},
		{"too many connections", pg("53300"), Unavailable},
		{"connection exception", pg("08006"), Unavailable},
		{"serialization failure", pg("40001"), Conflict},
		{"deadlock", pg("40P01"), Conflict},
		{"unique violation", pg("23505"), Other},
		{"no rows (database/sql)", fmt.Errorf("get: %w", sql.ErrNoRows), NoRows},
		{"no rows (pgx)", fmt.Errorf("get: %w", pgx.ErrNoRows), NoRows},
		{"deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), Timeout},
		{"canceled", fmt.Errorf("get: %w", context.Canceled), Canceled},
		{"bad conn", driver.ErrBadConn, Unavailable},
		{"conn done", sql.ErrConnDone, Unavailable},
		{"eof", io.ErrUnexpectedEOF, Unavailable},
		{"plain", errors.New("something else"), Other},
	}
	for _, c := range cases {
		if got := Classify(c.err); got != c.want {
			t.Errorf("%s: Classify = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestParseConfigSessionSettings(t *testing.T) {
	cfg, err := ParseConfig("postgres://u:secret@db.invalid/app", PoolOptions{ApplicationName: "svc", StatementTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"application_name": "svc", "statement_timeout": "2000", "idle_in_transaction_session_timeout": "4000",
	} {
		if got := cfg.RuntimeParams[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if cfg.ConnectTimeout != DefaultConnectTimeout {
		t.Errorf("connect timeout = %v, want %v", cfg.ConnectTimeout, DefaultConnectTimeout)
	}
	// The URL's own settings win over defaults but not over explicit options.
	cfg, err = ParseConfig("postgres://db.invalid/app?connect_timeout=9&application_name=mine", PoolOptions{ApplicationName: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout != 9*time.Second || cfg.RuntimeParams["application_name"] != "mine" {
		t.Errorf("URL settings lost: %v %q", cfg.ConnectTimeout, cfg.RuntimeParams["application_name"])
	}
	if _, ok := cfg.RuntimeParams["statement_timeout"]; ok {
		t.Error("statement_timeout set without a StatementTimeout")
	}
}

func TestParseConfigHidesTheURL(t *testing.T) {
	_, err := ParseConfig("postgres://u:hunter2@db.invalid:notaport/app", PoolOptions{})
	if !errors.Is(err, ErrInvalidURL) {
		t.Fatalf("err = %v, want ErrInvalidURL", err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error quotes the password: %v", err)
	}
}
