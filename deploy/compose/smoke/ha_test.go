package smoke

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	marketdataclient "github.com/tickerdesk/tickerdesk/clients/marketdata"
	notesclient "github.com/tickerdesk/tickerdesk/clients/notes"
	"github.com/tickerdesk/tickerdesk/clients/notes/notesapi"
)

// member is one line of patronictl list.
type member struct {
	Name  string `json:"Member"`
	Role  string `json:"Role"`
	State string `json:"State"`
	TL    int    `json:"TL"`
}

// cluster is what patronictl list shows at one moment.
type cluster []member

// leader is the running leader's name, or "".
func (c cluster) leader() string {
	for _, m := range c {
		if m.Role == "Leader" && m.State == "running" {
			return m.Name
		}
	}
	return ""
}

// syncStandby is the running synchronous standby's name, or "".
func (c cluster) syncStandby() string {
	for _, m := range c {
		if m.Role == "Sync Standby" && (m.State == "running" || m.State == "streaming") {
			return m.Name
		}
	}
	return ""
}

// role is the role and state node is listed with, or "absent".
func (c cluster) role(node string) string {
	for _, m := range c {
		if m.Name == node {
			return m.Role + " " + m.State
		}
	}
	return "absent"
}

func (c cluster) String() string {
	var b strings.Builder
	for _, m := range c {
		fmt.Fprintf(&b, "%s %s %s (TL %d); ", m.Name, m.Role, m.State, m.TL)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// haCluster is the ha profile's nodes, by name, with their containers'
// ids: docker exec answers in a fraction of compose exec's time, which
// matters while a failover is timed.
type haCluster struct {
	s   *stack
	ids map[string]string
}

// members runs patronictl list on the first of the nodes that answers;
// the error is the last one when none does.
func (h haCluster) members(nodes ...string) (cluster, error) {
	var err error
	for _, n := range nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var out []byte
		out, err = exec.CommandContext(ctx, "docker", "exec", h.ids[n], "patronictl", "-c", "/etc/patroni.yml", "list", "-f", "json").Output()
		cancel()
		if err != nil {
			continue
		}
		var c cluster
		if err = json.Unmarshal(out, &c); err == nil {
			return c, nil
		}
	}
	return nil, err
}

// wait polls patronictl list on nodes until ok holds, for up to limit; it
// fails the test with the last listing otherwise.
func (h haCluster) wait(limit time.Duration, what string, ok func(cluster) bool, nodes ...string) cluster {
	h.s.t.Helper()
	var last cluster
	var err error
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if last, err = h.members(nodes...); err == nil && ok(last) {
			return last
		}
	}
	h.s.t.Fatalf("no %s within %s: %v (%v)", what, limit, last, err)
	return nil
}

// psql runs a query on node's PostgreSQL as postgres and returns its
// unaligned answer.
func (h haCluster) psql(node, db, query string) string {
	h.s.t.Helper()
	out, err := exec.Command("docker", "exec", h.ids[node], "psql", "-X", "-h", "/var/run/postgresql", "-U", "postgres", "-d", db, "-tAc", query).CombinedOutput()
	if err != nil {
		h.s.t.Fatalf("psql on %s: %v: %s", node, err, out)
	}
	return strings.TrimSpace(string(out))
}

// createWithKey creates a note with a fixed Idempotency-Key, so that
// sending it again after an unknown outcome cannot create a second note.
func createWithKey(ctx context.Context, c *notesclient.Client, key, title string) (int, string, error) {
	resp, err := c.API().CreateNoteWithResponse(ctx, &notesapi.CreateNoteParams{IdempotencyKey: &key},
		notesapi.NoteWrite{Title: title, Content: "written through HAProxy"})
	if err != nil {
		return 0, "", err
	}
	if resp.JSON201 == nil {
		return resp.StatusCode(), "", fmt.Errorf("create: %d %s", resp.StatusCode(), resp.Body)
	}
	return resp.StatusCode(), resp.JSON201.Id, nil
}

// TestComposeHA runs the stack with the ha profile (PostgreSQL as three
// Patroni nodes behind HAProxy, ha.compose.yaml laid over) and shows that
// it fails over: a leader and a synchronous standby; both services'
// database sessions on the primary come through HAProxy; a note written,
// the leader's container killed (SIGKILL, the machine gone); a new leader
// elected; the note read back and a new write accepted through the
// gateway; the old leader, started again, rejoins as a standby.
func TestComposeHA(t *testing.T) {
	start := time.Now()
	s := up(t, true)
	ctx := context.Background()
	limit := time.Duration(envInt(t, "SMOKE_HA_TIMEOUT", 90)) * time.Second
	// The ha profile's PostgreSQL nodes.
	haNodes := []string{"pg1", "pg2", "pg3"}
	h := haCluster{s: s, ids: map[string]string{}}
	for _, n := range haNodes {
		h.ids[n] = s.container(n)
	}

	before := h.wait(limit, "leader with a synchronous standby", func(c cluster) bool {
		return c.leader() != "" && c.syncStandby() != ""
	}, haNodes...)
	leader := before.leader()
	t.Logf("cluster: %v", before)

	notesKey := s.newKey("notes-svc-1", "/notes-svc")
	marketdataKey := s.newKey("marketdata-svc-1", "/marketdata-svc")
	// No client retries: the loops below count every refusal themselves.
	notes, err := notesclient.New(s.gateway, notesclient.WithAPIKey(notesKey), notesclient.WithHTTPClient(s.client), notesclient.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	market, err := marketdataclient.New(s.gateway, marketdataclient.WithAccessKey(marketdataKey), marketdataclient.WithHTTPClient(s.client), marketdataclient.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	run := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	_, firstID, err := createWithKey(ctx, notes, "ha-before-"+run, "ha before "+run)
	if err != nil {
		t.Fatalf("write before the failover: %v", err)
	}
	for _, err := range market.EOD(ctx, marketdataclient.EODParams{Symbols: []string{"GOOG"}, Limit: 1}) {
		if err != nil {
			t.Fatalf("GET /v1/eod: %v", err)
		}
		break
	}

	// Every session of both services on the primary comes from HAProxy:
	// DATABASE_URL names haproxy:5000, nothing reaches a node directly.
	proxy := inspect(t, "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", s.container("haproxy"))
	proxy = strings.Fields(proxy)[0]
	for _, db := range []string{"notes", "marketdata"} {
		got := h.psql(leader, "postgres", fmt.Sprintf(
			"select count(*) filter (where host(client_addr) = '%s') || ' ' || count(*) from pg_stat_activity where datname = '%s' and backend_type = 'client backend'", proxy, db))
		var via, all int
		if _, err := fmt.Sscan(got, &via, &all); err != nil || all == 0 || via != all {
			t.Fatalf("%s sessions on the primary %s: %q (through HAProxy, all); want all through HAProxy (%s)", db, leader, got, proxy)
		}
		t.Logf("%s: %d sessions on the primary %s, all from HAProxy (%s)", db, all, leader, proxy)
	}

	// The leader's node dies whole: SIGKILL to Patroni and PostgreSQL.
	victim := h.ids[leader]
	survivors := slices.DeleteFunc(slices.Clone(haNodes), func(n string) bool { return n == leader })
	killed := time.Now()
	if out, err := exec.Command("docker", "kill", victim).CombinedOutput(); err != nil {
		t.Fatalf("docker kill %s: %v %s", leader, err, out)
	}
	after := h.wait(limit, "new leader", func(c cluster) bool {
		l := c.leader()
		return l != "" && l != leader
	}, survivors...)
	elected := time.Since(killed)
	t.Logf("killed leader %s; %s leads after %.1fs: %v", leader, after.leader(), elected.Seconds(), after)

	// The note written before is read back through the gateway once the
	// services reach the new primary; 503s meanwhile are the window.
	var read time.Duration
	var refusedReads int
	for deadline := time.Now().Add(limit); ; time.Sleep(250 * time.Millisecond) {
		n, err := notes.Get(ctx, firstID)
		if err == nil {
			if n.Title != "ha before "+run || n.Content != "written through HAProxy" {
				t.Fatalf("the note read back after the failover is %+v", n)
			}
			read = time.Since(killed)
			break
		}
		refusedReads++
		if time.Now().After(deadline) {
			t.Fatalf("the note written before the failover is not readable %s after the kill: %v", limit, err)
		}
	}
	// A new write, with one Idempotency-Key across attempts: an attempt
	// whose outcome was unknown cannot leave a second note.
	key := "ha-after-" + run
	var wrote time.Duration
	var refusedWrites int
	var secondID string
	for deadline := time.Now().Add(limit); ; time.Sleep(250 * time.Millisecond) {
		status, id, err := createWithKey(ctx, notes, key, "ha after "+run)
		if err == nil {
			wrote, secondID = time.Since(killed), id
			break
		}
		refusedWrites++
		if status != 0 && status != http.StatusServiceUnavailable && status != http.StatusGatewayTimeout && status != http.StatusBadGateway {
			t.Fatalf("write after the failover: %v (want 2xx, or 503 while the primary changes)", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write accepted %s after the kill: %v", limit, err)
		}
	}
	t.Logf("after the kill: note read back at %.1fs (%d refused before), a write accepted at %.1fs (%d refused before)",
		read.Seconds(), refusedReads, wrote.Seconds(), refusedWrites)
	titles := h.psql(after.leader(), "notes", "select count(*) filter (where title = 'ha before "+run+"') || ' ' || count(*) filter (where title = 'ha after "+run+"') from notes")
	if titles != "1 1" {
		t.Fatalf("notes on the new primary: %q (before, after), want exactly one of each", titles)
	}

	// The old leader, started again, is rewound and follows the new one.
	restarted := time.Now()
	if out, err := exec.Command("docker", "start", victim).CombinedOutput(); err != nil {
		t.Fatalf("docker start %s: %v %s", leader, err, out)
	}
	final := h.wait(limit, leader+" back as a standby", func(c cluster) bool {
		r := c.role(leader)
		return c.leader() == after.leader() && c.syncStandby() != "" && (r == "Replica running" || r == "Replica streaming" || r == "Sync Standby running" || r == "Sync Standby streaming")
	}, haNodes...)
	rejoined := time.Since(restarted)
	if got := h.psql(leader, "notes", "select count(*) from notes where id in ('"+firstID+"', '"+secondID+"')"); got != "2" {
		t.Errorf("%s after rejoining has %s of the two notes, want 2", leader, got)
	}
	t.Logf("%s rejoined as a standby %.1fs after its start: %v", leader, rejoined.Seconds(), final)

	if path := os.Getenv("SMOKE_HA_REPORT"); path != "" {
		report := fmt.Sprintf("old_leader=%s\nnew_leader=%s\nelected_s=%.1f\nread_s=%.1f\nwrite_s=%.1f\nrefused_reads=%d\nrefused_writes=%d\nrejoined_s=%.1f\n",
			leader, after.leader(), elected.Seconds(), read.Seconds(), wrote.Seconds(), refusedReads, refusedWrites, rejoined.Seconds())
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			t.Errorf("SMOKE_HA_REPORT: %v", err)
		}
	}
	t.Logf("done in %s", time.Since(start).Round(time.Second))
}
