// Package stack starts what tdnotes and tdmarketdata have in common: a
// network of their own, PostgreSQL and Redis on it, the service migrated,
// its admin API on and keys issued through it, commands executed in the
// running service container, and the teardown of all of it in order.
//
// Readiness is always asked of the server itself (a PostgreSQL startup
// message, a Redis PING, the service's /readyz), never read from logs or
// waited out with sleeps.
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/docker/go-connections/nat"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Default images of the dependencies. The environment variables are the
// ones the project's own test suites read (scripts/testimages.sh), so a
// machine without a registry points both at local stand-ins once.
const (
	DefaultPostgresImage = "postgres:15"
	DefaultRedisImage    = "redis:7"
	PostgresImageEnv     = "TICKERDESK_TEST_POSTGRES_IMAGE"
	RedisImageEnv        = "TICKERDESK_TEST_REDIS_IMAGE"
	// ImageRepo prefixes the service images that `make images` builds.
	ImageRepo = "tickerdesk"
	// DefaultTag is the tag `make images` gives the newest build besides
	// its version.
	DefaultTag = "latest"
)

// Database credentials of the throwaway server; reachable only on the
// stack's own network and through a random host port.
const (
	dbUser     = "tickerdesk"
	dbPassword = "tickerdesk"
	// PostgresAlias and RedisAlias are the dependencies' names on the
	// stack's network.
	PostgresAlias = "postgres"
	RedisAlias    = "redis"
)

// startTimeout bounds each wait strategy: a cold start of PostgreSQL on a
// busy machine takes seconds, never minutes.
const startTimeout = 2 * time.Minute

// PostgresImage is the PostgreSQL image to start: the option when given,
// else the environment's, else the official image.
func PostgresImage(option string) string { return pick(option, PostgresImageEnv, DefaultPostgresImage) }

// RedisImage is the Redis image to start, chosen like PostgresImage.
func RedisImage(option string) string { return pick(option, RedisImageEnv, DefaultRedisImage) }

func pick(option, env, def string) string {
	if option != "" {
		return option
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// serviceImage is the image of svc for tag: a bare tag names the image
// `make images` built (tickerdesk/<svc>:<tag>); anything with a slash or a
// colon is taken as a whole reference, for images kept in a registry.
func serviceImage(svc, tag string) string {
	if tag == "" {
		tag = DefaultTag
	}
	if strings.ContainsAny(tag, "/:@") {
		return tag
	}
	return ImageRepo + "/" + svc + ":" + tag
}

// databaseURL is the URL the service containers use for db on the stack's
// network.
func databaseURL(db string) string {
	return fmt.Sprintf("postgres://%s:%s@%s:5432/%s?sslmode=disable", dbUser, dbPassword, PostgresAlias, db)
}

// redisURL is the URL the service containers use for Redis.
func redisURL() string { return "redis://" + RedisAlias + ":6379/0" }

// Stack is one running set of containers on their own network. Its zero
// parts are simply skipped by Terminate, so a stack that failed half-way
// is cleaned up the same way as a whole one.
type Stack struct {
	mu       sync.Mutex
	svc      Service
	Network  *testcontainers.DockerNetwork
	Postgres *testcontainers.DockerContainer
	Redis    *testcontainers.DockerContainer
	Service  *testcontainers.DockerContainer
	// adminToken is the service's admin token, written into its
	// container at start; accounts are the ids of the accounts IssueKey
	// created, by name.
	adminToken string
	accounts   map[string]string
}

// newNetwork creates the stack's network. Its name is random, and it
// carries the session labels, so Ryuk removes it too when it is on.
func (s *Stack) newNetwork(ctx context.Context) error {
	nw, err := network.New(ctx)
	if err != nil {
		return fmt.Errorf("create network: %w", err)
	}
	s.Network = nw
	return nil
}

// startDeps starts PostgreSQL with database db and, unless redisImage is
// empty, Redis, side by side: the slower PostgreSQL start hides Redis's.
func (s *Stack) startDeps(ctx context.Context, pgImage, db, redisImage string) error {
	var wg sync.WaitGroup
	var pgErr, redisErr error
	wg.Go(func() {
		ctr, err := testcontainers.Run(ctx, pgImage,
			network.WithNetwork([]string{PostgresAlias}, s.Network),
			testcontainers.WithEnv(map[string]string{
				"POSTGRES_USER": dbUser, "POSTGRES_PASSWORD": dbPassword, "POSTGRES_DB": db,
				"POSTGRES_INITDB_ARGS": "--no-sync",
			}),
			// A test database is thrown away with the container: durability
			// buys nothing and costs most of initdb's and a bulk load's time,
			// so the data lives in memory and is never synced.
			testcontainers.WithCmd("postgres", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"),
			testcontainers.WithTmpfs(map[string]string{"/var/lib/postgresql/data": "rw"}),
			testcontainers.WithExposedPorts("5432/tcp"),
			// Over TCP on purpose: the entrypoint's init-time server listens
			// on the socket only, so this passes once the final server is up.
			testcontainers.WithWaitStrategyAndDeadline(startTimeout, postgresReady(dbUser, db)),
		)
		s.set(&s.Postgres, ctr)
		if err != nil {
			pgErr = fmt.Errorf("start postgres (%s): %w", pgImage, err)
		}
	})
	if redisImage != "" {
		wg.Go(func() {
			ctr, err := testcontainers.Run(ctx, redisImage,
				network.WithNetwork([]string{RedisAlias}, s.Network),
				testcontainers.WithCmd("redis-server", "--save", "", "--appendonly", "no"),
				testcontainers.WithExposedPorts("6379/tcp"),
				testcontainers.WithWaitStrategyAndDeadline(startTimeout, redisReady()),
			)
			s.set(&s.Redis, ctr)
			if err != nil {
				redisErr = fmt.Errorf("start redis (%s): %w", redisImage, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(pgErr, redisErr)
}

func (s *Stack) set(dst **testcontainers.DockerContainer, ctr *testcontainers.DockerContainer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*dst = ctr
}

// Exec runs the service's binary with args inside the running service
// container and returns its output. The images are FROM scratch, without
// a shell, so the binary is executed directly; that is also much quicker
// than a one-shot container per command.
func (s *Stack) Exec(ctx context.Context, args ...string) (string, error) {
	code, r, err := s.Service.Exec(ctx, append([]string{"/" + s.svc.Name}, args...), tcexec.Multiplexed())
	if err != nil {
		return "", fmt.Errorf("exec %s: %w", strings.Join(args, " "), err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("exec %s: read output: %w", strings.Join(args, " "), err)
	}
	if code != 0 {
		return string(b), fmt.Errorf("exec %s: exit code %d:\n%s", strings.Join(args, " "), code, tail(string(b)))
	}
	return string(b), nil
}

// tail keeps the end of a command's output for an error message.
func tail(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// readyzWait is the service's readiness check: /readyz answers 200 once
// the server listens and reaches its database. It replaces
// testcontainers' default deadline of a minute, which a busy machine can
// spend on PostgreSQL alone.
func readyzWait(port string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithWaitStrategyAndDeadline(startTimeout,
		wait.ForHTTP("/readyz").WithPort(nat.Port(port)).WithStartupTimeout(startTimeout).WithPollInterval(50*time.Millisecond))
}

// startError wraps err of starting the service container with the end
// of its log, which says why it did not get ready (the services log no
// secrets).
func startError(ctx context.Context, image string, ctr *testcontainers.DockerContainer, err error) error {
	if ctr == nil {
		return fmt.Errorf("start %s: %w", image, err)
	}
	rc, lerr := ctr.Logs(ctx)
	if lerr != nil {
		return fmt.Errorf("start %s: %w", image, err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
	return fmt.Errorf("start %s: %w; its log ends:\n%s", image, err, tail(string(b)))
}

// IDs are the containers of the stack and its network, empty once
// Terminate removed them.
func (s *Stack) IDs() (containers []string, network string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range []*testcontainers.DockerContainer{s.Service, s.Postgres, s.Redis} {
		if c != nil {
			containers = append(containers, c.GetContainerID())
		}
	}
	if s.Network != nil {
		network = s.Network.ID
	}
	return containers, network
}

// Terminate removes the service, then its dependencies side by side, then
// the network, and forgets each part it removed, so a second call (an
// explicit Terminate and a CleanupContainer) does nothing.
func (s *Stack) Terminate(ctx context.Context, opts ...testcontainers.TerminateOption) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.Service != nil {
		if err := s.Service.Terminate(ctx, opts...); err != nil {
			errs = append(errs, fmt.Errorf("terminate service: %w", err))
		}
		s.Service = nil
	}
	var wg sync.WaitGroup
	var pgErr, redisErr error
	if s.Postgres != nil {
		wg.Go(func() { pgErr = s.Postgres.Terminate(ctx, opts...) })
	}
	if s.Redis != nil {
		wg.Go(func() { redisErr = s.Redis.Terminate(ctx, opts...) })
	}
	wg.Wait()
	if pgErr != nil {
		errs = append(errs, fmt.Errorf("terminate postgres: %w", pgErr))
	}
	if redisErr != nil {
		errs = append(errs, fmt.Errorf("terminate redis: %w", redisErr))
	}
	s.Postgres, s.Redis = nil, nil
	if s.Network != nil {
		if err := s.Network.Remove(ctx); err != nil {
			errs = append(errs, fmt.Errorf("remove network: %w", err))
		}
		s.Network = nil
	}
	return errors.Join(errs...)
}
