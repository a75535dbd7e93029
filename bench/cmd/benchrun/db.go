package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// pg addresses the benchmark's PostgreSQL cluster through psql.
type pg struct {
	r        *runner
	adminURL string // database "postgres"
}

// dbURL is the URL of database name in the same cluster.
func (p pg) dbURL(name string) string {
	u, err := url.Parse(p.adminURL)
	if err != nil {
		return p.adminURL
	}
	u.Path = "/" + name
	q := u.Query()
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// query runs sql on database db and returns the unaligned, tab-separated
// rows.
func (p pg) query(ctx context.Context, db, sql string) ([][]string, error) {
	out, err := p.r.output(ctx, cmdSpec{name: "psql", quiet: true,
		args: []string{p.dbURL(db), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql}})
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line != "" {
			rows = append(rows, strings.Split(line, "\t"))
		}
	}
	return rows, nil
}

// value returns the first column of the first row, or "".
func (p pg) value(ctx context.Context, db, sql string) (string, error) {
	rows, err := p.query(ctx, db, sql)
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return rows[0][0], nil
}

// exec runs sql and records it as a command of the benchmark.
func (p pg) exec(ctx context.Context, db, sql string) error {
	_, err := p.r.output(ctx, cmdSpec{name: "psql",
		args: []string{p.dbURL(db), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql}})
	return err
}

// comment returns the comment of database name: the marker of the dataset
// it holds.
func (p pg) comment(ctx context.Context, name string) (string, error) {
	return p.value(ctx, "postgres", fmt.Sprintf(
		"SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = %s", lit(name)))
}

// recreate drops and creates database name.
func (p pg) recreate(ctx context.Context, name string) error {
	if err := p.exec(ctx, "postgres", fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", ident(name))); err != nil {
		return err
	}
	return p.exec(ctx, "postgres", fmt.Sprintf("CREATE DATABASE %s", ident(name)))
}

func lit(s string) string   { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
