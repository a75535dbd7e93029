package reads_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// statementLog is a pgx.QueryTracer that keeps the SQL and arguments of
// every statement its pool runs, so that a test can run a read's
// statements again under EXPLAIN.
type statementLog struct {
	mu    sync.Mutex
	stmts []loggedStatement
}

type loggedStatement struct {
	sql  string
	args []any
}

// TraceQueryStart records the statement with the caller's arguments,
// without the options (result formats, exec mode) pgx takes from their
// head.
func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	args := d.Args
	for len(args) > 0 && isQueryOption(args[0]) {
		args = args[1:]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stmts = append(l.stmts, loggedStatement{sql: d.SQL, args: args})
	return ctx
}

func isQueryOption(arg any) bool {
	switch arg.(type) {
	case pgx.QueryResultFormats, pgx.QueryResultFormatsByOID, pgx.QueryExecMode, pgx.QueryRewriter:
		return true
	}
	return false
}

// TraceQueryEnd implements pgx.QueryTracer.
func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take returns the statements recorded since the last take.
func (l *statementLog) take() []loggedStatement {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.stmts
	l.stmts = nil
	return out
}

// planNode is what a read's cost is made of in one node of EXPLAIN
// (ANALYZE, BUFFERS, FORMAT JSON). A node's block counts include its
// children's.
type planNode struct {
	Type        string     `json:"Node Type"`
	Rows        float64    `json:"Actual Rows"`
	Loops       float64    `json:"Actual Loops"`
	Filtered    float64    `json:"Rows Removed by Filter"`
	Rechecked   float64    `json:"Rows Removed by Index Recheck"`
	SharedHit   int64      `json:"Shared Hit Blocks"`
	SharedRead  int64      `json:"Shared Read Blocks"`
	TempRead    int64      `json:"Temp Read Blocks"`
	TempWritten int64      `json:"Temp Written Blocks"`
	Children    []planNode `json:"Plans"`
}

// readCost is the database work of one read, summed over its statements,
// in figures that depend on the data and the plans only, never on the
// machine's load. Rows are what the scans produced or threw away:
// tableRows from a table (a sequential, index or bitmap heap scan),
// keyRows from an index alone (the counts' index-only scans). Buffers are
// the shared buffers touched, each time one is, and the temporary file
// blocks written and read back (a sort or hash beyond work_mem).
type readCost struct {
	statements         int
	tableRows, keyRows int64
	buffers            int64
}

func (c readCost) rows() int64 { return c.tableRows + c.keyRows }

func (c readCost) String() string {
	return fmt.Sprintf("%d statements, %d table rows + %d key rows, %d buffers", c.statements, c.tableRows, c.keyRows, c.buffers)
}

func (c *readCost) addScans(n planNode) {
	rows := int64((n.Rows + n.Filtered + n.Rechecked) * n.Loops)
	switch n.Type {
	case "Seq Scan", "Index Scan", "Bitmap Heap Scan", "Tid Scan", "Tid Range Scan":
		c.tableRows += rows
	case "Index Only Scan":
		c.keyRows += rows
	}
	for _, ch := range n.Children {
		c.addScans(ch)
	}
}

// explainCost runs stmts again on conn under EXPLAIN (ANALYZE, BUFFERS)
// and sums their cost. Each runs as an unnamed statement described first,
// as the service's pool runs a statement the first times on a
// connection: the parameters take the types the server infers, and the
// plan is the custom plan for these values.
func explainCost(ctx context.Context, conn *sql.Conn, stmts []loggedStatement) (readCost, error) {
	var cost readCost
	err := conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		for _, s := range stmts {
			var raw string
			args := append([]any{pgx.QueryExecModeDescribeExec}, s.args...)
			if err := c.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+s.sql, args...).Scan(&raw); err != nil {
				return fmt.Errorf("explain %.80q: %w", s.sql, err)
			}
			var plans []struct {
				Plan planNode `json:"Plan"`
			}
			if err := json.Unmarshal([]byte(raw), &plans); err != nil || len(plans) != 1 {
				return fmt.Errorf("plan %.200s: %v", raw, err)
			}
			p := plans[0].Plan
			cost.statements++
			cost.buffers += p.SharedHit + p.SharedRead + p.TempRead + p.TempWritten
			cost.addScans(p)
		}
		return nil
	})
	if err != nil {
		return readCost{}, fmt.Errorf("explain cost: %w", err)
	}
	return cost, nil
}
