package cmdmain

import (
	"context"
	"fmt"
	"io"
)

// Service is a service's program: its name, version and usage, how it
// reads its configuration, and its commands by name. Both services' run is
// a Service's Run, so that they answer version and help, refuse an unknown
// command and stop on a bad configuration alike.
type Service[C any] struct {
	Name, Version, Usage string
	// Default is the command run when the arguments name none.
	Default string
	// Load reads the configuration through getenv. Every command but
	// version and help needs it, so a bad one stops each of them before
	// it starts.
	Load func(getenv func(string) string) (C, error)
	// Commands run with the configuration and their own arguments.
	Commands map[string]func(ctx context.Context, cfg C, args []string) error
}

// Run runs the command args name (Default when they name none) after
// loading the configuration; version and help are answered by Command
// without it, and an unknown command is an error carrying the usage,
// before any configuration is read.
func (s Service[C]) Run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	name, rest, done := Command(args, s.Default, s.Name, s.Version, s.Usage, stdout)
	if done {
		return nil
	}
	command, ok := s.Commands[name]
	if !ok {
		return fmt.Errorf("unknown command %q\n%s", name, s.Usage)
	}
	cfg, err := s.Load(getenv)
	if err != nil {
		return err
	}
	return command(ctx, cfg, rest)
}
