package suite

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tickerdesk/tickerdesk/resilience/internal/load"
)

// stalledListing is a GET sent over a raw TCP connection that reads the
// status line and then never reads again, with a receive buffer so small
// that the server soon blocks writing to it.
type stalledListing struct {
	path   string
	status int // 0 when no status line came
	conn   net.Conn
}

func openStalled(addr, path, key string) *stalledListing {
	l := &stalledListing{path: path}
	d := net.Dialer{Timeout: 2 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return l
	}
	l.conn = conn
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: notes\r\nAuthorization: Bearer %s\r\n\r\n", path, key); err != nil {
		return l
	}
	_ = conn.SetReadDeadline(time.Now().Add(RequestTimeout + 5*time.Second))
	line, err := bufio.NewReaderSize(conn, 64).ReadString('\n')
	if f := strings.Fields(line); err == nil && len(f) >= 2 {
		l.status, _ = strconv.Atoi(f[1])
	}
	return l
}

// AuditStalledListings reproduces an outside audit's finding: one tenant starts 40 listings
// of an account with thousands of 8 KB notes and never reads the answers,
// while other tenants send a bounded load and /readyz is probed. Before the
// fix every streaming listing kept a database connection until the request
// timeout, so the pool was the stalled clients': other tenants got 503 and
// readiness failed. The stalled requests cover every listing that reads
// the database at the client's pace: unpaged, sorted, tag and search
// filtered, offset-only, and pages of the largest limit. The load outlasts
// the request timeout, by which the stalled listings must have been cut.
func AuditStalledListings(ctx context.Context, e *Env) {
	s := e.Report.Scenario("Audit: 40 stalled listings by one tenant, other tenants under load (notes-svc)")
	stallKey, err := e.Notes.CreateKey(ctx, "--account", "audit-stall")
	if err != nil {
		s.Check("setup", false, "create key: %v", err)
		return
	}
	e.Secret(stallKey, "notes key audit-stall")
	const seeded, noteBytes = 3000, 8000
	_, err = e.Stack.PSQL(ctx, e.NotesDB, fmt.Sprintf(`INSERT INTO notes (id, account_id, title, content, tags, created_at, updated_at)
		SELECT 'note_' || lpad((700000000 + g)::text, 26, '0'), a.id, 'seeded ' || (g %% 97), repeat('lorem ipsum dolor ', %d),
			ARRAY['bulk', 'g' || (g %% 5)], now() - g * interval '1 second', now() - g * interval '1 second'
		FROM generate_series(1, %d) AS g, accounts a WHERE a.name = 'audit-stall'`, noteBytes/18, seeded))
	if err != nil {
		s.Check("setup", false, "seed notes: %v", err)
		return
	}
	type tenant struct{ key, note string }
	others := []tenant{{key: e.NotesKeyB}}
	for i := range 2 {
		k, err := e.Notes.CreateKey(ctx, "--account", fmt.Sprintf("audit-other-%d", i))
		if err != nil {
			s.Check("setup", false, "create key: %v", err)
			return
		}
		e.Secret(k, "notes key of another tenant")
		others = append(others, tenant{key: k})
	}
	for i := range others {
		for j := range 5 {
			n, _, err := e.CreateNote(others[i].key, fmt.Sprintf("other tenant note %d", j), e.NoteContent("lorem ipsum of another tenant"), []string{"bulk"})
			if err != nil {
				s.Check("setup", false, "%v", err)
				return
			}
			others[i].note = n.ID
		}
	}

	unpaged := []string{"", "?sort=title", "?sort=-updated_at", "?tag=bulk&tag=g1", "?q=lorem+ipsum", "?offset=10&sort=-created_at"}
	paged := []string{"?limit=1000", "?limit=1000&offset=500&sort=-created_at", "?limit=1000&q=lorem&tag=bulk&sort=title", "?limit=1000&sort=updated_at"}
	const stalled = 40
	listings := make([]*stalledListing, stalled)
	var swg sync.WaitGroup
	for i := range stalled {
		path := "/v1/notes" + unpaged[i%len(unpaged)]
		if i%2 == 1 {
			path = "/v1/notes" + paged[i%len(paged)]
		}
		swg.Go(func() { listings[i] = openStalled(e.Notes.Addr, path, stallKey) })
	}
	defer func() {
		for _, l := range listings {
			if l != nil && l.conn != nil {
				_ = l.conn.Close()
			}
		}
	}()

	// Readiness and the pool, probed while the other tenants' load runs.
	probeCtx, stopProbe := context.WithCancel(ctx)
	var readyProbes []int
	maxInUse := -1.0
	var pwg sync.WaitGroup
	pwg.Go(func() {
		for probeCtx.Err() == nil {
			readyProbes = append(readyProbes, e.Ready(e.Notes))
			if v, err := e.Metric(e.Notes, "go_sql_in_use_connections", `db_name="notes"`); err == nil {
				maxInUse = max(maxInUse, v)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// Other tenants, started as the stalled listings arrive: reads of one
	// note, pages and searches, and now and then an unpaged listing of
	// their own (each tenant's over a second apart, so that none exceeds
	// its own account's bound).
	client := load.NewClient(RequestTimeout+2*time.Second, true)
	results := load.Run(ctx, load.Plan{Rate: 40, Duration: 6 * time.Second, Client: client, Build: func(i int) (*http.Request, error) {
		o := others[i%len(others)]
		n := i / len(others)
		path := []string{"/v1/notes/" + o.note, "/v1/notes?limit=10&sort=title", "/v1/notes?q=lorem&tag=bulk&limit=5"}[n%3]
		if n%16 == 5 {
			path = "/v1/notes?sort=-updated_at"
		}
		return e.NotesRequest(http.MethodGet, path, o.key, nil, nil), nil
	}})
	swg.Wait()
	stopProbe()
	pwg.Wait()
	// The load outlasts the request timeout: by now the streamed listings
	// must have been cut and have given their slots back.
	inFlight, inFlightErr := e.Metric(e.Notes, "http_requests_in_flight")
	slots, slotsErr := e.Metric(e.Notes, "notes_listings_in_progress")

	byStatus := map[int]int{}
	streaming := 0
	var stalledOut []string
	for _, l := range listings {
		byStatus[l.status]++
		if l.status == 200 {
			streaming++
		}
	}
	for _, st := range []int{200, 429, 503, 0} {
		if byStatus[st] > 0 {
			stalledOut = append(stalledOut, fmt.Sprintf("%d×%d", st, byStatus[st]))
		}
	}
	answered := byStatus[200] + byStatus[429] + byStatus[503]
	s.Check("every stalled listing is streamed or refused with the documented 429/503", answered == stalled,
		"%s (0 = no status line within the request timeout: waiting for a connection)", strings.Join(stalledOut, " "))
	sum := load.Summarize(results)
	ok := sum.ByStatus[200]
	s.Sent, s.Outcomes = sum.Sent+stalled, "other tenants: "+sum.StatusString()+"; stalled listings: "+strings.Join(stalledOut, " ")
	s.Failed = sum.Sent - ok
	s.Check("other tenants' requests all succeed", ok == sum.Sent && sum.Sent > 0, "%d of %d answered 200 (%.1f%%)",
		ok, sum.Sent, 100*float64(ok)/float64(max(sum.Sent, 1)))
	s.Check("other tenants never wait for the stalled clients", sum.P99Latency < RequestTimeout/2, "p99 %s, max %s (request timeout %s)",
		sum.P99Latency.Round(time.Millisecond), sum.MaxLatency.Round(time.Millisecond), RequestTimeout)
	ready := 0
	for _, st := range readyProbes {
		if st == 200 {
			ready++
		}
	}
	s.Check("/readyz stays 200", ready == len(readyProbes) && ready > 0, "%d of %d probes answered 200", ready, len(readyProbes))
	s.Check("stalled listings end at the request timeout and free their slots", inFlightErr == nil && slotsErr == nil && inFlight == 1 && slots == 0,
		"%d streamed; after the load %.0f requests in flight (the /metrics one) and %.0f listing slots taken (%v %v)", streaming, inFlight, slots, inFlightErr, slotsErr)
	s.Note("at most %.0f of the %d pool connections were in use during the load (batch reads of the streamed listings and the other tenants' requests)", maxInUse, DBMaxOpenConns)
	s.Recovery = fmt.Sprintf("other tenants %d/%d OK, p99 %s", ok, sum.Sent, sum.P99Latency.Round(time.Millisecond))
}
