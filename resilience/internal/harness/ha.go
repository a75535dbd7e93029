package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// HACluster is the failover drill's PostgreSQL cluster: three Patroni
// nodes behind HAProxy in containers, run by scripts/ha-cluster.sh (see
// its comment). Nodes are killed and frozen whole through Docker, so a
// node's Patroni and PostgreSQL go together, as when a machine dies.
type HACluster struct {
	// Script is scripts/ha-cluster.sh; Prefix names the containers,
	// Port is HAProxy's on 127.0.0.1, Sync is Patroni's synchronous_mode.
	Script string
	Prefix string
	Port   int
	Sync   bool
	// MaxLag is maximum_lag_on_failover in bytes (0: the script's 1 MiB).
	MaxLag int64
}

func (c *HACluster) env() []string {
	env := append(os.Environ(), "HA_PREFIX="+c.Prefix, fmt.Sprintf("HA_PORT=%d", c.Port), fmt.Sprintf("HA_SYNC=%t", c.Sync))
	if c.MaxLag > 0 {
		env = append(env, fmt.Sprintf("HA_MAX_LAG=%d", c.MaxLag))
	}
	return env
}

// run runs the cluster script with args and returns its standard output.
func (c *HACluster) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.Script, args...)
	cmd.Env = c.env()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("ha-cluster %s: %w: %s", args[0], err, lastLine(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// Up starts the cluster and returns the base URL of its primary (no
// database, no query).
func (c *HACluster) Up(ctx context.Context) (string, error) {
	out, err := c.run(ctx, "up")
	if err != nil {
		return "", err
	}
	return lastLine(out), nil
}

// Down removes the cluster with its data.
func (c *HACluster) Down(ctx context.Context) error {
	_, err := c.run(ctx, "down")
	return err
}

// Leader names the node that leads now (pg1..pg3).
func (c *HACluster) Leader(ctx context.Context) (string, error) { return c.run(ctx, "leader") }

// Members lists "name role state" lines.
func (c *HACluster) Members(ctx context.Context) string {
	out, _ := c.run(ctx, "members")
	return strings.ReplaceAll(out, "\t", " ")
}

// WaitHealthy waits up to limit for a leader other than not (when not is
// set: a killed leader is listed as running until its key expires), a
// streaming (sync) standby and standbys running standbys in all.
func (c *HACluster) WaitHealthy(ctx context.Context, limit time.Duration, standbys int, not string) error {
	_, err := c.run(ctx, "wait", fmt.Sprint(int(limit.Seconds())), fmt.Sprint(standbys), not)
	return err
}

// Network disconnects node from the cluster's network, or connects it
// again under its name: a standby cut off receives no WAL at all (a frozen
// process would still have its kernel take the stream in).
func (c *HACluster) Network(ctx context.Context, node string, connect bool) error {
	args := []string{"network", "disconnect", c.Prefix + "-net", c.Container(node)}
	if connect {
		args = []string{"network", "connect", "--alias", node, c.Prefix + "-net", c.Container(node)}
	}
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker %s %s: %w: %s", args[1], node, err, lastLine(string(out)))
	}
	return nil
}

// Switchover moves the leadership to another node, planned.
func (c *HACluster) Switchover(ctx context.Context, leader string) error {
	_, err := c.run(ctx, "ctl", "switchover", "--leader", leader, "--force")
	return err
}

// PSQL runs sql on the leader's database db.
func (c *HACluster) PSQL(ctx context.Context, db, sql string) (string, error) {
	return c.run(ctx, "psql", "-d", db, "-tAc", sql)
}

// Container is node's container name.
func (c *HACluster) Container(node string) string { return c.Prefix + "-" + node }

// Docker runs a docker command on node's container: kill (SIGKILL to every
// process of the node), pause and unpause (SIGSTOP and SIGCONT through the
// freezer, as a stalled machine), start.
func (c *HACluster) Docker(ctx context.Context, verb, node string) error {
	out, err := exec.CommandContext(ctx, "docker", verb, c.Container(node)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker %s %s: %w: %s", verb, node, err, lastLine(string(out)))
	}
	return nil
}

// SaveLogs writes node's container log to path (best effort: it is for
// reading after a failed run).
func (c *HACluster) SaveLogs(ctx context.Context, node, path string) {
	out, _ := exec.CommandContext(ctx, "docker", "logs", c.Container(node)).CombinedOutput()
	_ = os.WriteFile(path, out, 0o644)
}
