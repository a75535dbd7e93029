// Package tdmarketdata starts marketdata-svc for another team's integration
// tests: PostgreSQL, Redis and the service from the Tickerdesk images, on a
// network of their own, migrated, optionally loaded with data, with an
// access key created at start.
//
//	ctr, err := tdmarketdata.Run(ctx, tdmarketdata.WithDemoData())
//	testcontainers.CleanupContainer(t, ctr)
//	if err != nil { t.Fatal(err) }
//	client, _ := marketdataclient.New(ctr.BaseURL(), marketdataclient.WithAccessKey(ctr.APIKey()))
//
// Run takes this package's options and any testcontainers-go customizer;
// the latter apply to the service container.
package tdmarketdata

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/tickerdesk/tickerdesk/testcontainers/internal/stack"
)

// importDir holds the files of WithImport inside the service container.
const importDir = "/import"

// Limits are the limits of the key created at start; zero values mean no
// limit, as with `marketdata-svc keys create`.
type Limits struct {
	// RatePerSecond is the requests per second the key may make.
	RatePerSecond int
	// MonthlyQuota is the requests per calendar month the key may make.
	MonthlyQuota int64
	// ExpiresIn is the key's lifetime from its creation.
	ExpiresIn time.Duration
}

type options struct {
	demo          bool
	imports       []string
	account       string
	scopes        []string
	limits        Limits
	tag           string
	postgresImage string
	redisImage    string
	noRedis       bool
}

// Option configures Run. It is also a testcontainers.ContainerCustomizer
// that changes nothing, so that Run takes this package's options and
// testcontainers-go's customizers in one list, as testcontainers-go's own
// modules do.
type Option func(*options) error

// Customize lets an Option stand among testcontainers customizers; it
// leaves the request alone.
func (Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

// WithDemoData loads the bundled demo dataset (GOOG 2004-08-19 to
// 2008-10-14, MSFT 2003, the S&P 500 2000 to 2020, their tickers and
// exchanges) before the service answers, as `marketdata-svc demo` does.
func WithDemoData() Option {
	return func(o *options) error { o.demo = true; return nil }
}

// WithImport loads the CSV file at csvPath (on the test's machine) with
// `marketdata-svc import`, which detects the kind (prices, tickers,
// exchanges, splits, dividends) from the header. Give it once per file;
// files load in order, after the demo data.
func WithImport(csvPath string) Option {
	return func(o *options) error {
		if csvPath == "" {
			return fmt.Errorf("WithImport: empty path")
		}
		o.imports = append(o.imports, csvPath)
		return nil
	}
}

// WithKey sets the account, scopes and limits of the key created at start
// (default: account "testcontainers", every scope, no limits). Nil scopes
// mean every scope.
func WithKey(account string, scopes []string, limits Limits) Option {
	return func(o *options) error {
		if account == "" {
			return fmt.Errorf("WithKey: empty account")
		}
		if limits.RatePerSecond < 0 || limits.MonthlyQuota < 0 || limits.ExpiresIn < 0 {
			return fmt.Errorf("WithKey: negative limit")
		}
		o.account, o.scopes, o.limits = account, scopes, limits
		return nil
	}
}

// WithImage starts the service from tag of the image `make images`
// builds (tickerdesk/marketdata-svc:<tag>; default latest), or from a whole
// image reference when tag has a slash or a colon.
func WithImage(tag string) Option {
	return func(o *options) error { o.tag = tag; return nil }
}

// WithPostgresImage starts PostgreSQL from image instead of
// $TICKERDESK_TEST_POSTGRES_IMAGE or postgres:15.
func WithPostgresImage(image string) Option {
	return func(o *options) error { o.postgresImage = image; return nil }
}

// WithRedisImage starts Redis from image instead of
// $TICKERDESK_TEST_REDIS_IMAGE or redis:7.
func WithRedisImage(image string) Option {
	return func(o *options) error { o.redisImage = image; return nil }
}

// WithoutRedis starts no Redis: the service then caches in process and
// counts rate limits and quotas per process, as it does without
// MARKETDATA_REDIS_URL.
func WithoutRedis() Option {
	return func(o *options) error { o.noRedis = true; return nil }
}

// Container is a running marketdata-svc with its PostgreSQL and Redis. It
// is the service's container, so testcontainers-go's container methods
// (Logs, Exec, Host, …) reach the service. BaseURL is the service's root
// URL on the test's machine, such as http://localhost:32768; APIKey is the
// access key created at start; Terminate removes the service, PostgreSQL,
// Redis and their network, and calling it again does nothing.
type Container = stack.Container

// Run starts PostgreSQL, Redis (unless WithoutRedis) and marketdata-svc
// on a new network, migrates the database, loads the data the options ask
// for, creates a key and returns once /readyz answers. On an error the
// returned Container, when not nil, holds whatever did start: pass it to
// testcontainers.CleanupContainer before checking the error.
func Run(ctx context.Context, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	return stack.Run[Option](ctx, "tdmarketdata", options{account: "testcontainers"}, opts, start)
}

func start(ctx context.Context, s *stack.Stack, o options, custom []testcontainers.ContainerCustomizer) (string, error) {
	svc := stack.Service{Name: "marketdata-svc", Port: "8081/tcp", EnvPrefix: "MARKETDATA_", Database: "marketdata", KeyPrefix: "tdm_"}
	images := stack.Images{Tag: o.tag, Postgres: stack.PostgresImage(o.postgresImage)}
	if !o.noRedis {
		images.Redis = stack.RedisImage(o.redisImage)
	}
	files := make([]testcontainers.ContainerFile, len(o.imports))
	for i, p := range o.imports {
		files[i] = testcontainers.ContainerFile{
			HostFilePath:      p,
			ContainerFilePath: fmt.Sprintf("%s/%d-%s", importDir, i, filepath.Base(p)),
			FileMode:          0o444,
		}
	}
	if err := s.Start(ctx, svc, images, append([]testcontainers.ContainerCustomizer{testcontainers.WithFiles(files...)}, custom...)...); err != nil {
		return "", err
	}
	// The server's own binary loads the data (Exec), as it migrated: the
	// data version is polled, and nothing reaches the server before Run
	// returns.
	if o.demo {
		if _, err := s.Exec(ctx, "demo"); err != nil {
			return "", err
		}
	}
	for _, f := range files {
		if _, err := s.Exec(ctx, "import", f.ContainerFilePath); err != nil {
			return "", err
		}
	}
	return s.IssueKey(ctx, o.account, stack.KeyOptions{Scopes: o.scopes, ExpiresIn: o.limits.ExpiresIn,
		RatePerSecond: o.limits.RatePerSecond, MonthlyQuota: o.limits.MonthlyQuota})
}
