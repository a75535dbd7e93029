package cmdmain

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// testService records what its commands were given; its configuration is
// the value of the variable CFG, and an empty one does not load.
func testService(got *[]string) Service[string] {
	record := func(cmd string) func(context.Context, string, []string) error {
		return func(_ context.Context, cfg string, args []string) error {
			*got = append(*got, cmd+" cfg="+cfg+" args="+strings.Join(args, ","))
			return nil
		}
	}
	return Service[string]{
		Name: "svc", Version: "v1", Usage: "usage text", Default: "serve",
		Load: func(getenv func(string) string) (string, error) {
			if v := getenv("CFG"); v != "" {
				return v, nil
			}
			return "", errors.New("CFG is required")
		},
		Commands: map[string]func(context.Context, string, []string) error{
			"serve": record("serve"),
			"keys":  record("keys"),
		},
	}
}

func TestServiceRunsTheNamedCommandWithTheConfiguration(t *testing.T) {
	var got []string
	svc := testService(&got)
	env := func(string) string { return "c1" }
	for _, args := range [][]string{nil, {"keys", "create", "--account", "a"}} {
		if err := svc.Run(context.Background(), args, env, &bytes.Buffer{}); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
	}
	want := []string{"serve cfg=c1 args=", "keys cfg=c1 args=create,--account,a"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("commands ran as %q, want %q", got, want)
	}
}

func TestServiceRefusesBeforeRunning(t *testing.T) {
	var got []string
	svc := testService(&got)
	noEnv := func(string) string { return "" }
	// An unknown command is named with the usage, whatever the
	// configuration.
	err := svc.Run(context.Background(), []string{"bogus"}, noEnv, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `unknown command "bogus"`) || !strings.Contains(err.Error(), "usage text") {
		t.Errorf("unknown command: %v", err)
	}
	// A configuration that does not load stops a known command.
	if err := svc.Run(context.Background(), []string{"keys"}, noEnv, &bytes.Buffer{}); err == nil || err.Error() != "CFG is required" {
		t.Errorf("bad configuration: %v", err)
	}
	// Version needs no configuration.
	var out bytes.Buffer
	if err := svc.Run(context.Background(), []string{"version"}, noEnv, &out); err != nil || out.String() != "svc v1\n" {
		t.Errorf("version: %q %v", out.String(), err)
	}
	if len(got) != 0 {
		t.Errorf("commands ran: %q", got)
	}
}
