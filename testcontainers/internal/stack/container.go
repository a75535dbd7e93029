package stack

import (
	"context"
	"fmt"

	"github.com/testcontainers/testcontainers-go"
)

// Container is the running service that tdnotes.Run and tdmarketdata.Run
// return, under their own names (aliases of this type): what a test gets
// back is the same in both, only the start differs. It is the service's
// container, so testcontainers-go's container methods (Logs, Exec, Host,
// …) reach the service; Terminate removes the whole stack.
type Container struct {
	*testcontainers.DockerContainer
	stack   *Stack
	baseURL string
	apiKey  string
}

// BaseURL is the service's root URL on the test's machine, such as
// http://localhost:32768.
func (c *Container) BaseURL() string { return c.baseURL }

// APIKey is the key created at start.
func (c *Container) APIKey() string { return c.apiKey }

// IssueKey issues a new key for account through the service's admin API,
// with scopes (none: the service's default), and returns it. The account
// is created the first time this Container names it; the key never
// expires and has no rate limit or quota.
func (c *Container) IssueKey(ctx context.Context, account string, scopes ...string) (string, error) {
	return c.stack.IssueKey(ctx, account, KeyOptions{Scopes: scopes})
}

// Terminate removes the service, its dependencies and their network.
// Calling it again, or on the nil Container of a failed Run, does nothing.
func (c *Container) Terminate(ctx context.Context, opts ...testcontainers.TerminateOption) error {
	if c == nil {
		return nil
	}
	return c.stack.Terminate(ctx, opts...)
}

// Of is the stack behind c, for the packages' own tests; it is not a
// method so that it stays out of the public Container's method set.
func Of(c *Container) *Stack { return c.stack }

// Run is the Run of tdnotes and tdmarketdata, which names its errors pkg.
// It applies the options of type O among opts to o, the package's
// defaults, and hands the rest (testcontainers-go's customizers) to start,
// which starts the stack it is given and returns the key it created. On
// an error the returned Container, when not nil, holds whatever did start,
// for testcontainers.CleanupContainer.
func Run[O ~func(*T) error, T any](ctx context.Context, pkg string, o T, opts []testcontainers.ContainerCustomizer,
	start func(context.Context, *Stack, T, []testcontainers.ContainerCustomizer) (apiKey string, err error)) (*Container, error) {
	custom, err := apply[O](opts, &o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	c := &Container{stack: &Stack{}}
	c.apiKey, err = start(ctx, c.stack, o, custom)
	// Whatever started, even after an error, is the Container's to remove.
	c.DockerContainer = c.stack.Service
	if err == nil {
		c.baseURL, err = c.stack.BaseURL(ctx)
	}
	if err != nil {
		return c, fmt.Errorf("%s: %w", pkg, err)
	}
	return c, nil
}
