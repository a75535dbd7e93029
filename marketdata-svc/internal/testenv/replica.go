package testenv

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// Replica is a real streaming replica of the test PostgreSQL, made with
// `pg_basebackup -R` from it: a physical copy carries every database, so
// the replica serves each test's fresh database too. It is started on
// first use, once per test binary, and only by suites that ask for it.
//
// In Docker mode it is a second server inside the PostgreSQL container
// (port replicaPort, published with the container's), in local-stack or
// URL mode a server run from the local PostgreSQL binaries (as the
// postgres OS user when the tests run as root), on a free local port.
//
// The suites that use it share it and run one test at a time: a test that
// stops, pauses or freezes it restores it before it ends (Stop, PauseReplay
// and Freeze see to it).
type Replica struct {
	host, port string
	// run runs a bash script as the OS user of the server, where it lives.
	run func(ctx context.Context, script string) (string, error)
	dir string
}

// replicaPort is the replica's port inside the PostgreSQL container.
const replicaPort = "5433"

// replicaRole is the replication role created on the primary.
const replicaRole = "replicator"

var replicaEnv struct {
	once sync.Once
	r    *Replica
	err  error
}

// StartReplica returns the binary's replica, starting it on first use.
func StartReplica(t testing.TB) *Replica {
	t.Helper()
	require(t)
	replicaEnv.once.Do(func() { replicaEnv.r, replicaEnv.err = startReplica() })
	if replicaEnv.err != nil {
		t.Fatal(replicaEnv.err)
	}
	return replicaEnv.r
}

// URL returns primaryURL (a database of Postgres) on the replica.
func (r *Replica) URL(primaryURL string) string {
	u, err := url.Parse(primaryURL)
	if err != nil {
		panic(fmt.Sprintf("testenv: postgres URL does not parse: %v", err))
	}
	u.Host = net.JoinHostPort(r.host, r.port)
	return u.String()
}

// Stop kills the replica (immediate shutdown, as a crash would). The
// returned start starts it again and waits until it accepts connections;
// it resumes streaming from where it stopped.
func (r *Replica) Stop(t testing.TB) (start func()) {
	t.Helper()
	return r.fault(t, r.ctl, "pg_ctl -D \"$DIR\" -m immediate -w stop", "pg_ctl -D \"$DIR\" -l \"$DIR/server.log\" -w -t 60 start")
}

// PauseReplay stops the replica replaying the WAL it receives
// (pg_wal_replay_pause); it keeps answering reads at its last position.
// The returned resume resumes replay (pg_wal_replay_resume).
func (r *Replica) PauseReplay(t testing.TB) (resume func()) {
	t.Helper()
	return r.fault(t, r.sql, "SELECT pg_wal_replay_pause()", "SELECT pg_wal_replay_resume()")
}

// Freeze stops the replica's server processes with SIGSTOP, as a hung
// host or a stalled VM would: its connections stay open and new ones are
// accepted by the kernel, but nothing answers until the returned thaw
// (SIGCONT).
func (r *Replica) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	return r.fault(t, r.ctl, serverProcs+`kill -STOP "$P" $KIDS`, serverProcs+`kill -CONT $KIDS "$P"`)
}

// fault runs cause with run and returns what ends the fault: undo, run
// once, when the test calls it or else at the test's cleanup, since the
// suites share the replica and each leaves it as it found it.
func (r *Replica) fault(t testing.TB, run func(testing.TB, string), cause, undo string) func() {
	t.Helper()
	run(t, cause)
	var once sync.Once
	end := func() { once.Do(func() { run(t, undo) }) }
	t.Cleanup(end)
	return end
}

// serverProcs sets P to the replica's postmaster and KIDS to its children,
// read from /proc (the test image has no pgrep).
const serverProcs = `P=$(head -1 "$DIR/postmaster.pid")
KIDS=$(for f in /proc/[0-9]*/stat; do read -r pid _ _ ppid _ <"$f" 2>/dev/null && [ "$ppid" = "$P" ] && echo "$pid"; done || true)
`

func (r *Replica) ctl(t testing.TB, cmd string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := r.run(ctx, "set -e; DIR="+shellQuote(r.dir)+"; "+cmd); err != nil {
		t.Fatalf("testenv: replica: %s: %v\n%s", cmd, err, out)
	}
}

func (r *Replica) sql(t testing.TB, q string) {
	t.Helper()
	db, err := sql.Open("pgx", r.URL(env.adminURL))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, q); err != nil {
		t.Fatalf("testenv: replica: %s: %v", q, err)
	}
}

func startReplica() (*Replica, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin, err := sql.Open("pgx", env.adminURL)
	if err != nil {
		return nil, fmt.Errorf("testenv: replica: %w", err)
	}
	defer admin.Close()
	// The primary: wal_level replica and WAL senders (Docker mode passes
	// them to the server; they are PostgreSQL's defaults elsewhere), a
	// replication role, and a pg_hba line for it.
	var level string
	var senders int
	if err := admin.QueryRowContext(ctx, "SELECT current_setting('wal_level'), current_setting('max_wal_senders')::int").Scan(&level, &senders); err != nil {
		return nil, fmt.Errorf("testenv: replica: %w", err)
	}
	if level == "minimal" || senders < 1 {
		return nil, fmt.Errorf("testenv: replica: the test PostgreSQL has wal_level=%s, max_wal_senders=%d: set wal_level=replica and max_wal_senders>=1", level, senders)
	}
	if _, err := admin.ExecContext(ctx, `DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '`+replicaRole+`') THEN
    CREATE ROLE `+replicaRole+` REPLICATION LOGIN PASSWORD '`+replicaRole+`';
  END IF;
END $$`); err != nil {
		return nil, fmt.Errorf("testenv: replica: create role: %w", err)
	}
	var hba string
	var rules int
	if err := admin.QueryRowContext(ctx, `SELECT current_setting('hba_file'),
  (SELECT count(*) FROM pg_hba_file_rules WHERE 'replication' = ANY(database) AND type = 'host')`).Scan(&hba, &rules); err != nil {
		return nil, fmt.Errorf("testenv: replica: %w", err)
	}
	u, err := url.Parse(env.adminURL)
	if err != nil {
		return nil, fmt.Errorf("testenv: replica: admin URL does not parse")
	}
	r := &Replica{}
	// serverPort is the replica's port where it runs, r.port where the
	// tests reach it (a published port in Docker mode).
	var serverPort string
	primaryHost, primaryPort := u.Hostname(), u.Port()
	listen := "127.0.0.1"
	if primaryPort == "" {
		primaryPort = "5432"
	}
	if env.postgres != nil {
		c := env.postgres
		r.run = func(ctx context.Context, script string) (string, error) {
			code, out, err := c.Exec(ctx, []string{"bash", "-c", script}, tcexec.Multiplexed(), tcexec.WithUser("postgres"))
			if err != nil {
				return "", err
			}
			b, _ := io.ReadAll(out)
			if code != 0 {
				return string(b), fmt.Errorf("exit status %d", code)
			}
			return string(b), nil
		}
		r.dir, serverPort, listen = "/var/lib/postgresql/replica", replicaPort, "*"
		primaryHost, primaryPort = "127.0.0.1", "5432"
		if r.host, err = c.Host(ctx); err != nil {
			return nil, fmt.Errorf("testenv: replica: %w", err)
		}
		mapped, err := c.MappedPort(ctx, replicaPort+"/tcp")
		if err != nil {
			return nil, fmt.Errorf("testenv: replica: %w", err)
		}
		r.port = mapped.Port()
		rules = 0 // the container is ours: always add the line
	} else {
		if r.run, err = localRunner(); err != nil {
			return nil, err
		}
		if r.dir, err = localReplicaDir(); err != nil {
			return nil, err
		}
		if r.port, err = freePort(); err != nil {
			return nil, err
		}
		serverPort = r.port
		r.host = "127.0.0.1"
		env.cleanups = append(env.cleanups, func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, _ = r.run(ctx, "pg_ctl -D "+shellQuote(r.dir)+" -m immediate -w stop >/dev/null 2>&1")
			_ = os.RemoveAll(filepath.Dir(r.dir))
		})
	}
	if rules == 0 {
		line := "host replication " + replicaRole + " all scram-sha-256"
		if out, err := r.run(ctx, "printf '\\n%s\\n' "+shellQuote(line)+" >>"+shellQuote(hba)); err != nil {
			return nil, fmt.Errorf("testenv: replica: add pg_hba line: %v: %s", err, out)
		}
		if _, err := admin.ExecContext(ctx, "SELECT pg_reload_conf()"); err != nil {
			return nil, fmt.Errorf("testenv: replica: %w", err)
		}
	}
	// -R writes standby.signal and primary_conninfo; the settings after it
	// make a hot standby of its own on another port and socket directory.
	// fsync=off (as on the test primary) also skips the sync of the whole
	// data directory at every start after a backup or a kill, 4 s here.
	script := fmt.Sprintf(`set -e
DIR=%[1]s
rm -rf "$DIR"
PGPASSWORD=%[2]s pg_basebackup -h %[3]s -p %[4]s -U %[2]s -D "$DIR" -R -X stream -c fast --no-sync
cat >>"$DIR/postgresql.auto.conf" <<CONF
port = %[5]s
listen_addresses = '%[6]s'
unix_socket_directories = '$DIR'
hot_standby = on
fsync = off
hot_standby_feedback = on
wal_receiver_status_interval = 1s
CONF
pg_ctl -D "$DIR" -l "$DIR/server.log" -w -t 60 start >/dev/null`,
		shellQuote(r.dir), replicaRole, shellQuote(primaryHost), shellQuote(primaryPort), serverPort, listen)
	start := time.Now()
	if out, err := r.run(ctx, script); err != nil {
		return nil, fmt.Errorf("testenv: replica: pg_basebackup and start: %v: %s", err, out)
	}
	fmt.Fprintf(os.Stderr, "testenv: streaming replica at %s:%s (pg_basebackup -R and start in %s)\n", r.host, r.port, time.Since(start).Round(time.Millisecond))
	return r, nil
}

// localRunner runs scripts with the local PostgreSQL binaries on the
// PATH, as the postgres OS user when the tests run as root (PostgreSQL
// refuses to run as root).
func localRunner() (func(context.Context, string) (string, error), error) {
	bin, err := localBinDir()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, script string) (string, error) {
		args := []string{"bash", "-c", script}
		if os.Geteuid() == 0 {
			args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
		}
		cmd := exec.CommandContext(ctx, args[0], args[1:]...) // #nosec G204 -- test support: fixed scripts of this file
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}, nil
}

// localBinDir finds the newest local PostgreSQL 15+ binaries, as
// scripts/stack.sh does.
func localBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return pgMajor(b) - pgMajor(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_basebackup")); err == nil && pgMajor(d) >= 15 {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_basebackup"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("testenv: replica: no local PostgreSQL binaries (pg_basebackup, pg_ctl) for a streaming replica; %s", howto)
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// localReplicaDir makes the replica's data directory, owned by the
// postgres OS user when the tests run as root.
func localReplicaDir() (string, error) {
	dir, err := os.MkdirTemp("", "testenv-replica-")
	if err != nil {
		return "", fmt.Errorf("testenv: replica: %w", err)
	}
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			return "", fmt.Errorf("testenv: replica: running as root and no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", fmt.Errorf("testenv: replica: %w", err)
		}
	}
	// pg_basebackup wants an empty or missing directory; the script
	// removes and recreates it, so its parent must be writable too: keep
	// the directory one level down.
	return filepath.Join(dir, "data"), nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("testenv: replica: %w", err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func shellQuote(s string) string {
	return "'" + string(bytes.ReplaceAll([]byte(s), []byte("'"), []byte(`'\''`))) + "'"
}
