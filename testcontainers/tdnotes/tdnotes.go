// Package tdnotes starts notes-svc for another team's integration tests:
// PostgreSQL and the service from the Tickerdesk images, on a network of
// their own, migrated, with an API key created at start through the
// service's admin API; IssueKey issues more.
//
//	ctr, err := tdnotes.Run(ctx)
//	testcontainers.CleanupContainer(t, ctr)
//	if err != nil { t.Fatal(err) }
//	client, _ := notesclient.New(ctr.BaseURL(), notesclient.WithAPIKey(ctr.APIKey()))
//
// Run takes this package's options and any testcontainers-go customizer;
// the latter apply to the service container.
package tdnotes

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/tickerdesk/tickerdesk/testcontainers/internal/stack"
)

// Limits are the limits of the key created at start. notes-svc keys have
// no rate limit or quota, only a lifetime; zero means it never expires.
type Limits struct {
	// ExpiresIn is the key's lifetime from its creation.
	ExpiresIn time.Duration
}

type options struct {
	account       string
	scopes        []string
	limits        Limits
	tag           string
	postgresImage string
}

// Option configures Run. It is also a testcontainers.ContainerCustomizer
// that changes nothing, so that Run takes this package's options and
// testcontainers-go's customizers in one list, as testcontainers-go's own
// modules do.
type Option func(*options) error

// Customize lets an Option stand among testcontainers customizers; it
// leaves the request alone.
func (Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

// WithKey sets the account, scopes (notes:read, notes:write) and limits of
// the key created at start (default: account "testcontainers", both
// scopes, never expires). Nil scopes mean both.
func WithKey(account string, scopes []string, limits Limits) Option {
	return func(o *options) error {
		if account == "" {
			return fmt.Errorf("WithKey: empty account")
		}
		if limits.ExpiresIn < 0 {
			return fmt.Errorf("WithKey: negative lifetime")
		}
		o.account, o.scopes, o.limits = account, scopes, limits
		return nil
	}
}

// WithImage starts the service from tag of the image `make images`
// builds (tickerdesk/notes-svc:<tag>; default latest), or from a whole
// image reference when tag has a slash or a colon.
func WithImage(tag string) Option {
	return func(o *options) error { o.tag = tag; return nil }
}

// WithPostgresImage starts PostgreSQL from image instead of
// $TICKERDESK_TEST_POSTGRES_IMAGE or postgres:15.
func WithPostgresImage(image string) Option {
	return func(o *options) error { o.postgresImage = image; return nil }
}

// Container is a running notes-svc with its PostgreSQL. It is the
// service's container, so testcontainers-go's container methods (Logs,
// Exec, Host, …) reach the service. BaseURL is the service's root URL on
// the test's machine, such as http://localhost:32768; APIKey is the key
// created at start, sent as Authorization: Bearer; Terminate removes the
// service, PostgreSQL and their network, and calling it again does
// nothing.
type Container = stack.Container

// Run starts PostgreSQL and notes-svc on a new network, migrates the
// database, creates a key and returns once /readyz answers. On an error
// the returned Container, when not nil, holds whatever did start: pass it
// to testcontainers.CleanupContainer before checking the error.
func Run(ctx context.Context, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	return stack.Run[Option](ctx, "tdnotes", options{account: "testcontainers"}, opts, start)
}

func start(ctx context.Context, s *stack.Stack, o options, custom []testcontainers.ContainerCustomizer) (string, error) {
	// A key of its own per stack seals the webhook secrets, as a
	// deployment's does.
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook secret key: %w", err)
	}
	svc := stack.Service{Name: "notes-svc", Port: "8080/tcp", EnvPrefix: "NOTES_", Database: "notes", KeyPrefix: "tdn_",
		Env: map[string]string{"NOTES_WEBHOOK_SECRET_KEY": base64.StdEncoding.EncodeToString(key)}}
	if err := s.Start(ctx, svc, stack.Images{Tag: o.tag, Postgres: stack.PostgresImage(o.postgresImage)}, custom...); err != nil {
		return "", err
	}
	return s.IssueKey(ctx, o.account, stack.KeyOptions{Scopes: o.scopes, ExpiresIn: o.limits.ExpiresIn})
}
