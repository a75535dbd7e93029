// Package sqlcapture reads the statements a service ran from PostgreSQL's
// server log (log_statement = 'all' on the bench database) and turns them
// into pgbench scripts, so the database ceiling of a workload runs exactly
// the SQL the service runs, with the same bind parameters.
package sqlcapture

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Statement is one logged statement: its SQL text as sent (with $n
// placeholders when it was a prepared/extended-protocol execution) and the
// logged parameter values (nil for NULL).
type Statement struct {
	PID    string
	SQL    string
	Params []*string
}

// prefix of the default log_line_prefix '%m [%p] ': "2025-01-02 03:04:05.678 UTC [123] LOG:  ...".
var lineRe = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[(\d+)\] ([A-Z]+):  (.*)$`)

var executeRe = regexp.MustCompile(`^execute [^:]*: (.*)$`)

// Parse returns the statements logged in a segment of the server log, in
// log order. Continuation lines of a multi-line statement are joined.
func Parse(log string) []Statement {
	var out []Statement
	cur := -1 // index in out of the statement continuation lines belong to
	for _, line := range strings.Split(log, "\n") {
		m := lineRe.FindStringSubmatch(line)
		if m == nil {
			if cur >= 0 {
				out[cur].SQL += "\n" + line
			}
			continue
		}
		pid, level, msg := m[1], m[2], m[3]
		cur = -1
		switch {
		case level == "LOG" && strings.HasPrefix(msg, "statement: "):
			out = append(out, Statement{PID: pid, SQL: strings.TrimPrefix(msg, "statement: ")})
			cur = len(out) - 1
		case level == "LOG" && executeRe.MatchString(msg):
			out = append(out, Statement{PID: pid, SQL: executeRe.FindStringSubmatch(msg)[1]})
			cur = len(out) - 1
		case level == "DETAIL" && strings.HasPrefix(msg, "parameters: "):
			for i := len(out) - 1; i >= 0; i-- {
				if out[i].PID == pid {
					out[i].Params = parseParams(strings.TrimPrefix(msg, "parameters: "))
					break
				}
			}
		}
	}
	return out
}

// parseParams reads "$1 = 'a”b', $2 = NULL".
func parseParams(s string) []*string {
	var out []*string
	for len(s) > 0 {
		s = strings.TrimLeft(s, ", ")
		if !strings.HasPrefix(s, "$") {
			break
		}
		eq := strings.Index(s, " = ")
		if eq < 0 {
			break
		}
		s = s[eq+3:]
		if strings.HasPrefix(s, "NULL") {
			out = append(out, nil)
			s = s[4:]
			continue
		}
		if !strings.HasPrefix(s, "'") {
			break
		}
		var b strings.Builder
		i := 1
		for i < len(s) {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i += 2
					continue
				}
				break
			}
			b.WriteByte(s[i])
			i++
		}
		v := b.String()
		out = append(out, &v)
		s = s[min(i+1, len(s)):]
	}
	return out
}

// Between returns the statements logged after the statement containing
// startMarker and before the one containing endMarker, leaving out the
// statements of the markers' own session and those for which skip is true.
func Between(stmts []Statement, startMarker, endMarker string, skip func(Statement) bool) ([]Statement, error) {
	start, end := -1, -1
	markerPID := ""
	for i, s := range stmts {
		if start < 0 && strings.Contains(s.SQL, startMarker) {
			start, markerPID = i, s.PID
		} else if start >= 0 && strings.Contains(s.SQL, endMarker) {
			end = i
			break
		}
	}
	if start < 0 || end < 0 {
		return nil, fmt.Errorf("markers %q/%q not found in the server log", startMarker, endMarker)
	}
	var out []Statement
	for _, s := range stmts[start+1 : end] {
		if s.PID == markerPID || strings.TrimSpace(s.SQL) == "" || strings.TrimSpace(s.SQL) == ";" || (skip != nil && skip(s)) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// Common keeps the statements of a that also appear in b (same SQL text,
// counted as a multiset): background statements that happened to run
// during one probe window fall out.
func Common(a, b []Statement) []Statement {
	left := map[string]int{}
	for _, s := range b {
		left[s.SQL]++
	}
	var out []Statement
	for _, s := range a {
		if left[s.SQL] > 0 {
			left[s.SQL]--
			out = append(out, s)
		}
	}
	return out
}

// Binding says what a logged parameter value becomes in the pgbench script:
// a pgbench variable name (without the colon) or "" to keep the captured
// value (passed as a constant variable).
type Binding func(value string) string

// Script is a pgbench script and the constant variables it needs (-D).
type Script struct {
	Text      string
	Constants map[string]string
}

var placeholderRe = regexp.MustCompile(`\$(\d+)`)

// BuildScript turns captured statements into a pgbench script: every $n
// becomes a :variable, chosen by bind for varying values, or a constant
// variable c<k> holding the captured value. A NULL parameter is written as
// NULL and an empty string as ” in the SQL, since pgbench variables cannot
// hold either; PostgreSQL's custom plans fold such values the same way. Statements end with ";" and are joined into one line
// each (pgbench reads one statement per line unless it ends with ";").
func BuildScript(stmts []Statement, bind Binding, prelude string) Script {
	sc := Script{Constants: map[string]string{}}
	var b strings.Builder
	b.WriteString(prelude)
	constByValue := map[string]string{}
	for _, st := range stmts {
		sql := placeholderRe.ReplaceAllStringFunc(st.SQL, func(ph string) string {
			n, _ := strconv.Atoi(ph[1:])
			if n < 1 || n > len(st.Params) {
				return ph
			}
			p := st.Params[n-1]
			if p == nil {
				return "NULL"
			}
			if name := bind(*p); name != "" {
				return ":" + name
			}
			if *p == "" {
				return "''" // pgbench -D cannot define an empty variable
			}
			name, ok := constByValue[*p]
			if !ok {
				name = fmt.Sprintf("c%d", len(constByValue)+1)
				constByValue[*p] = name
				sc.Constants[name] = *p
			}
			return ":" + name
		})
		sql = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sql), ";"))
		b.WriteString(strings.Join(strings.Fields(sql), " "))
		b.WriteString(";\n")
	}
	sc.Text = b.String()
	return sc
}
