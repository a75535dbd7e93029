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
	"strconv"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/tickerdesk/tickerdesk/testcontainers/internal/stack"
)

const (
	service = "marketdata-svc"
	binary  = "/marketdata-svc"
	port    = "8081/tcp"
	// database is the service's database in its own PostgreSQL server.
	database = "marketdata"
	// importDir holds the files of WithImport inside the service container.
	importDir = "/import"
	keyPrefix = "tdm_"
)

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
// (Logs, Exec, Host, …) reach the service; Terminate removes the whole
// stack.
type Container struct {
	*testcontainers.DockerContainer
	stack   *stack.Stack
	baseURL string
	apiKey  string
}

// BaseURL is the service's root URL on the test's machine, such as
// http://localhost:32768.
func (c *Container) BaseURL() string { return c.baseURL }

// APIKey is the access key created at start.
func (c *Container) APIKey() string { return c.apiKey }

// Terminate removes the service, PostgreSQL, Redis and their network.
// Calling it again does nothing.
func (c *Container) Terminate(ctx context.Context, opts ...testcontainers.TerminateOption) error {
	if c == nil {
		return nil
	}
	return c.stack.Terminate(ctx, opts...)
}

// Run starts PostgreSQL, Redis (unless WithoutRedis) and marketdata-svc
// on a new network, migrates the database, loads the data the options ask
// for, creates a key and returns once /readyz answers. On an error the
// returned Container, when not nil, holds whatever did start: pass it to
// testcontainers.CleanupContainer before checking the error.
func Run(ctx context.Context, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	o := options{account: "testcontainers"}
	var custom []testcontainers.ContainerCustomizer
	for _, opt := range opts {
		if mo, ok := opt.(Option); ok {
			if err := mo(&o); err != nil {
				return nil, fmt.Errorf("tdmarketdata: %w", err)
			}
			continue
		}
		custom = append(custom, opt)
	}
	c := &Container{stack: &stack.Stack{}}
	if err := c.start(ctx, o, custom); err != nil {
		return c, fmt.Errorf("tdmarketdata: %w", err)
	}
	return c, nil
}

func (c *Container) start(ctx context.Context, o options, custom []testcontainers.ContainerCustomizer) error {
	s := c.stack
	if err := s.NewNetwork(ctx); err != nil {
		return err
	}
	redisImage := ""
	if !o.noRedis {
		redisImage = stack.RedisImage(o.redisImage)
	}
	if err := s.StartDeps(ctx, stack.PostgresImage(o.postgresImage), database, redisImage); err != nil {
		return err
	}
	env := map[string]string{
		"MARKETDATA_DATABASE_URL": stack.DatabaseURL(database),
		"MARKETDATA_HTTP_ADDR":    ":8081",
		"MARKETDATA_LOG_LEVEL":    "warn",
		// Nothing stands in front of a test's service, and it need not
		// drain for load balancers when the test ends.
		"MARKETDATA_TRUSTED_PROXIES":  "",
		"MARKETDATA_SHUTDOWN_DRAIN":   "0s",
		"MARKETDATA_SHUTDOWN_TIMEOUT": "2s",
	}
	if !o.noRedis {
		env["MARKETDATA_REDIS_URL"] = stack.RedisURL()
	}
	image := stack.ServiceImage(service, o.tag)
	files := make([]testcontainers.ContainerFile, len(o.imports))
	for i, p := range o.imports {
		files[i] = testcontainers.ContainerFile{
			HostFilePath:      p,
			ContainerFilePath: fmt.Sprintf("%s/%d-%s", importDir, i, filepath.Base(p)),
			FileMode:          0o444,
		}
	}
	svcOpts := []testcontainers.ContainerCustomizer{
		network.WithNetwork([]string{service}, s.Network),
		testcontainers.WithEnv(env),
		testcontainers.WithCmd("serve"),
		testcontainers.WithExposedPorts(port),
		testcontainers.WithFiles(files...),
		stack.ReadyzWait(port),
	}
	ctr, err := testcontainers.Run(ctx, image, append(svcOpts, custom...)...)
	s.Service, c.DockerContainer = ctr, ctr
	if err != nil {
		return stack.StartError(ctx, image, ctr, err)
	}
	// The server's own binary migrates and loads the data (Exec): much
	// quicker than a one-shot container per command. The server starts on
	// the empty database, as it would during a rolling migration: /readyz
	// asks only that the database answers, the data version is polled,
	// and nothing reaches the server before Run returns.
	if _, err := s.Exec(ctx, binary, "migrate"); err != nil {
		return err
	}
	if o.demo {
		if _, err := s.Exec(ctx, binary, "demo"); err != nil {
			return err
		}
	}
	for _, f := range files {
		if _, err := s.Exec(ctx, binary, "import", f.ContainerFilePath); err != nil {
			return err
		}
	}
	args := []string{"keys", "create", "--account", o.account}
	if len(o.scopes) > 0 {
		args = append(args, "--scopes", strings.Join(o.scopes, ","))
	}
	if o.limits.RatePerSecond > 0 {
		args = append(args, "--rate-per-second", strconv.Itoa(o.limits.RatePerSecond))
	}
	if o.limits.MonthlyQuota > 0 {
		args = append(args, "--monthly-quota", strconv.FormatInt(o.limits.MonthlyQuota, 10))
	}
	if o.limits.ExpiresIn > 0 {
		args = append(args, "--expires-in", o.limits.ExpiresIn.String())
	}
	out, err := s.Exec(ctx, binary, args...)
	if err != nil {
		return err
	}
	if c.apiKey, err = stack.KeyFromOutput(out, keyPrefix); err != nil {
		return err
	}
	endpoint, err := ctr.PortEndpoint(ctx, port, "http")
	if err != nil {
		return fmt.Errorf("service endpoint: %w", err)
	}
	c.baseURL = endpoint
	return nil
}
