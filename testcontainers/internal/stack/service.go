package stack

import (
	"context"
	"fmt"
	"maps"

	"github.com/docker/go-connections/nat"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
)

// Service is what a stack needs to know of the Tickerdesk service it
// starts: both services take the same commands (serve, migrate, keys
// and the admin API) and the same environment variables under their own prefix.
type Service struct {
	// Name is the image's name and the container's alias on the
	// network, such as notes-svc; the image's binary is /<Name>.
	Name string
	// Port is the HTTP port inside the container, such as 8080/tcp.
	Port string
	// EnvPrefix starts each of the service's variables, such as NOTES_.
	EnvPrefix string
	// Database is the service's database in the stack's PostgreSQL.
	Database string
	// KeyPrefix starts every key the service creates, such as tdn_.
	KeyPrefix string
	// Env are the service's own variables, whole names, set besides the
	// ones every service gets.
	Env map[string]string
}

// Images are the images a stack starts.
type Images struct {
	// Tag names the service's image, as serviceImage takes it.
	Tag      string
	Postgres string
	// Redis is empty for a stack without Redis.
	Redis string
}

// apply runs the options of type O among opts on o and returns the rest,
// testcontainers-go's customizers, which apply to the service container.
// It lets Run take both kinds in one list, as testcontainers-go's own
// modules do.
func apply[O ~func(*T) error, T any](opts []testcontainers.ContainerCustomizer, o *T) ([]testcontainers.ContainerCustomizer, error) {
	var custom []testcontainers.ContainerCustomizer
	for _, opt := range opts {
		if own, ok := opt.(O); ok {
			if err := own(o); err != nil {
				return nil, err
			}
			continue
		}
		custom = append(custom, opt)
	}
	return custom, nil
}

// Start creates the network, starts PostgreSQL (and Redis when
// images.Redis is set) and then svc with opts, and migrates svc's
// database. Whatever started is in s, so Terminate removes it after an
// error too.
func (s *Stack) Start(ctx context.Context, svc Service, images Images, opts ...testcontainers.ContainerCustomizer) error {
	s.svc = svc
	if err := s.newNetwork(ctx); err != nil {
		return err
	}
	if err := s.startDeps(ctx, images.Postgres, svc.Database, images.Redis); err != nil {
		return err
	}
	token, tokenFile, err := newAdminToken()
	if err != nil {
		return err
	}
	s.adminToken = token
	p := svc.EnvPrefix
	env := map[string]string{
		p + "DATABASE_URL": databaseURL(svc.Database),
		p + "HTTP_ADDR":    ":" + nat.Port(svc.Port).Port(),
		p + "LOG_LEVEL":    "warn",
		// Nothing stands in front of a test's service, and it need not
		// drain for load balancers when the test ends.
		p + "TRUSTED_PROXIES":  "",
		p + "SHUTDOWN_DRAIN":   "0s",
		p + "SHUTDOWN_TIMEOUT": "2s",
		p + "ADMIN_ADDR":       ":" + nat.Port(adminPort).Port(),
		p + "ADMIN_TOKEN_FILE": adminTokenPath,
	}
	if images.Redis != "" {
		env[p+"REDIS_URL"] = redisURL()
	}
	maps.Copy(env, svc.Env)
	svcOpts := []testcontainers.ContainerCustomizer{
		network.WithNetwork([]string{svc.Name}, s.Network),
		testcontainers.WithEnv(env),
		testcontainers.WithCmd("serve"),
		testcontainers.WithExposedPorts(svc.Port, adminPort),
		testcontainers.WithFiles(tokenFile),
		readyzWait(svc.Port),
	}
	image := serviceImage(svc.Name, images.Tag)
	ctr, err := testcontainers.Run(ctx, image, append(svcOpts, opts...)...)
	s.set(&s.Service, ctr)
	if err != nil {
		return startError(ctx, image, ctr, err)
	}
	// The server's own binary migrates (Exec): much quicker than a
	// one-shot container. The server starts on the empty database, as it
	// would during a rolling migration; /readyz asks only that the
	// database answers, and nothing reaches the server before Run returns.
	_, err = s.Exec(ctx, "migrate")
	return err
}

// BaseURL is the service's root URL on the test's machine, such as
// http://localhost:32768.
func (s *Stack) BaseURL(ctx context.Context) (string, error) {
	endpoint, err := s.Service.PortEndpoint(ctx, nat.Port(s.svc.Port), "http")
	if err != nil {
		return "", fmt.Errorf("service endpoint: %w", err)
	}
	return endpoint, nil
}
