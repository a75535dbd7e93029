package notesdb

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// The hot statements (a note read by id, a note inserted) are built by
// GORM from the model once, at New, and replayed with each call's
// arguments; their rows are read straight into the model's fields. GORM
// would build the statement again on every call (the scope, the select
// list, the clauses) and scan through its reflection and value pools;
// see the package comment for what that cost.

// dryRun returns the SQL f builds on the notes session, with GORM's own
// placeholder (?) in place of each bind variable, for Raw or Exec to
// bind a call's arguments to.
func (s *Store) dryRun(f func(*gorm.DB) *gorm.DB) (string, error) {
	db := f(s.db.Session(&gorm.Session{DryRun: true, NewDB: true}))
	if db.Error != nil {
		return "", db.Error
	}
	return placeholders(db.Statement.SQL.String()), nil
}

// placeholders turns PostgreSQL's bind variables ($1, $2, ...) back into
// ?. GORM quotes every identifier and binds every value, so a $ followed
// by digits in its SQL is always a bind variable.
func placeholders(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] == '$' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9' {
			b.WriteByte('?')
			for i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9' {
				i++
			}
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// noteFields are the model's readable columns, in the order of its
// DBNames, which a statement built with Select(noteColumnNames) returns.
func noteFields(sch *schema.Schema) ([]*schema.Field, error) {
	var fields []*schema.Field
	for _, name := range sch.DBNames {
		f := sch.LookUpField(name)
		if f == nil || !f.Readable {
			return nil, fmt.Errorf("note column %q: no readable field", name)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// noteDest appends to dest the Scan destinations of a row of the model's
// columns into n: each field itself, or through its serializer.
func (s *Store) noteDest(ctx context.Context, n *notes.Note, dest []any) []any {
	rv := reflect.ValueOf(n).Elem()
	for _, f := range s.readFields {
		if f.Serializer != nil {
			dest = append(dest, &serialized{ctx: ctx, field: f, dst: rv})
			continue
		}
		dest = append(dest, f.ReflectValueOf(ctx, rv).Addr().Interface())
	}
	return dest
}

// serialized scans a column through its field's GORM serializer.
type serialized struct {
	ctx   context.Context
	field *schema.Field
	dst   reflect.Value
}

// Scan implements sql.Scanner.
func (s *serialized) Scan(src any) error {
	return s.field.Serializer.Scan(s.ctx, s.field, s.dst, src)
}

// takeNote reads the one row of rows into n, or reports
// gorm.ErrRecordNotFound, and closes rows.
func (s *Store) takeNote(ctx context.Context, rows *sql.Rows, n *notes.Note) error {
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return gorm.ErrRecordNotFound
	}
	var buf [12]any
	if err := rows.Scan(s.noteDest(ctx, n, buf[:0])...); err != nil {
		return err
	}
	tidyNote(n)
	return rows.Close()
}

// insertShape is the insert of a note as GORM builds it from the model:
// its SQL, and the field of each value it binds, in order.
func (s *Store) insertShape() (string, []*schema.Field, error) {
	var cols []clause.Column
	q, err := s.dryRun(func(db *gorm.DB) *gorm.DB {
		db = db.Create(&notes.Note{})
		if v, ok := db.Statement.Clauses["VALUES"].Expression.(clause.Values); ok {
			cols = v.Columns
		}
		return db
	})
	if err != nil {
		return "", nil, err
	}
	if strings.Count(q, "?") != len(cols) || len(cols) == 0 {
		return "", nil, fmt.Errorf("note insert: %d values for %d columns", strings.Count(q, "?"), len(cols))
	}
	fields := make([]*schema.Field, len(cols))
	for i, c := range cols {
		if fields[i] = s.notes.LookUpField(c.Name); fields[i] == nil {
			return "", nil, fmt.Errorf("note insert: column %q: no field", c.Name)
		}
	}
	return q, fields, nil
}

// insertNote inserts n on db (the pool or a transaction) with the insert
// GORM built at New, each value as GORM binds it (a serialized field's
// through its serializer).
func (s *Store) insertNote(db *gorm.DB, n *notes.Note) error {
	ctx := db.Statement.Context
	rv := reflect.ValueOf(n).Elem()
	var buf [12]any
	vals := buf[:0]
	for _, f := range s.insertFields {
		v, _ := f.ValueOf(ctx, rv)
		vals = append(vals, v)
	}
	// Exec: the insert GORM built from the model at New, not again per
	// call (71 against 61 allocations an insert, BenchmarkCreateNote).
	return db.Exec(s.insertNoteSQL, vals...).Error
}
