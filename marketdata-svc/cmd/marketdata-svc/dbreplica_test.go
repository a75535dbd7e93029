package main

import (
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/testenv"
)

// The commands with MARKETDATA_DATABASE_REPLICA_URLS naming a real
// streaming replica: import waits for the replica to replay its commit
// before it publishes the version, and publishes anyway after
// MARKETDATA_DATABASE_REPLICA_WAIT when replay is paused; serve reads from
// the replica once it has replayed the version in force.
func TestDatabaseReplicaCommands(t *testing.T) {
	c := newCluster(t)
	replica := testenv.StartReplica(t)
	c.env["MARKETDATA_DATABASE_REPLICA_URLS"] = replica.URL(c.env["MARKETDATA_DATABASE_URL"])
	c.env["MARKETDATA_DATABASE_REPLICA_WAIT"] = "1s"
	c.env["MARKETDATA_LOG_LEVEL"] = "info"

	out := c.cmd("import", "--symbol", "MSFT", "../../internal/demo/data/msft-2003.csv")
	if !strings.Contains(out, `"msg":"replicas replayed the import"`) || !strings.Contains(out, `"msg":"data version published"`) {
		t.Fatalf("import with a streaming replica:\n%s", out)
	}

	resume := replica.PauseReplay(t)
	start := time.Now()
	out = c.cmd("import", "--symbol", "GOOG", "../../internal/demo/data/goog-2004-2008.csv")
	if !strings.Contains(out, `"msg":"replicas still behind the import after the wait`) || !strings.Contains(out, `"msg":"data version published"`) ||
		time.Since(start) < time.Second {
		t.Fatalf("import with replay paused:\n%s", out)
	}
	resume()

	r := c.start("")
	key := c.key(0)
	for !strings.Contains(r.out.String(), `"msg":"database replica serving reads"`) {
		if time.Since(start) > time.Minute {
			t.Fatalf("serve never read from the replica:\n%s", r.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status, body, _, _ := get(r, "/v1/eod/latest?symbols=GOOG,MSFT", key); status != 200 ||
		!strings.Contains(body, `"date":"2008-`) || !strings.Contains(body, `"date":"2003-`) {
		t.Fatalf("eod through the replica: %d %s", status, body)
	}
	if m := scrape(t, r); !strings.Contains(m, `marketdata_db_replica_reads_total{target="replica"} `) ||
		strings.Contains(m, `marketdata_db_replica_reads_total{target="replica"} 0`) || !strings.Contains(m, "marketdata_db_replicas_usable 1") ||
		!strings.Contains(m, `go_sql_open_connections{db_name="marketdata_replica_1"}`) {
		t.Errorf("replica metrics:\n%s", m)
	}
	if log := r.out.String(); strings.Contains(log, "replica down") || !strings.Contains(log, `"database_replica_urls":["postgres://`) {
		t.Errorf("serve log:\n%s", log)
	}
}
