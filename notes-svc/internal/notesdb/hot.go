package notesdb

import (
	"context"
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
// arguments; the read's row goes straight into the model's fields. GORM
// would build the statement again on every call (the scope, the select
// list, the clauses) and scan through its reflection and value pools;
// see the package comment for what that cost.

// statement returns the SQL f builds on the notes session, with
// PostgreSQL's bind variables ($1, $2, ...).
func (s *Store) statement(f func(*gorm.DB) *gorm.DB) (string, error) {
	db := f(s.db.Session(&gorm.Session{DryRun: true, NewDB: true}))
	if db.Error != nil {
		return "", db.Error
	}
	return db.Statement.SQL.String(), nil
}

// dryRun is statement with GORM's own placeholder (?) in place of each
// bind variable, for Raw or Exec to bind a call's arguments to.
func (s *Store) dryRun(f func(*gorm.DB) *gorm.DB) (string, error) {
	q, err := s.statement(f)
	return placeholders(q), err
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
// readNote hands pgx each field itself, so a serialized field must be one
// pgx decodes natively: the tags' []string.
func noteFields(sch *schema.Schema) ([]*schema.Field, error) {
	var fields []*schema.Field
	for _, name := range sch.DBNames {
		f := sch.LookUpField(name)
		if f == nil || !f.Readable {
			return nil, fmt.Errorf("note column %q: no readable field", name)
		}
		if f.Serializer != nil && f.FieldType != reflect.TypeFor[[]string]() {
			return nil, fmt.Errorf("note column %q: serialized %s, which the note read cannot hand pgx", name, f.FieldType)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// readNote reads the note of accountID and id into n with the read
// GORM built at New (getNoteSQL), on the pool GORM runs on, through pgx
// itself: pgx decodes the row straight into the model's fields (a note's
// tags, the text[] the textarray serializer writes, into its []string),
// where database/sql would take a connection through its own pool and
// convert every column through its own values first; see the package
// comment for the figures. No row is pgx.ErrNoRows, which translate makes
// notes.ErrNotFound.
func (s *Store) readNote(ctx context.Context, accountID, id string, n *notes.Note) error {
	var buf [12]any
	dest := buf[:0]
	rv := reflect.ValueOf(n).Elem()
	for _, f := range s.readFields {
		dest = append(dest, f.ReflectValueOf(ctx, rv).Addr().Interface())
	}
	if err := s.pool.PGX.QueryRow(ctx, s.getNoteSQL, accountID, id).Scan(dest...); err != nil {
		return err
	}
	tidyNote(n)
	return nil
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

// noteValues appends the values of n that the note insert binds, in its
// order, to vals.
func (s *Store) noteValues(db *gorm.DB, n *notes.Note, vals []any) []any {
	ctx := db.Statement.Context
	rv := reflect.ValueOf(n).Elem()
	for _, f := range s.insertFields {
		v, _ := f.ValueOf(ctx, rv)
		vals = append(vals, v)
	}
	return vals
}

// createNote inserts n and its note.created event in one statement
// (createSQL) on db, the pool or a transaction.
func (s *Store) createNote(db *gorm.DB, n *notes.Note) error {
	ev, err := s.newEvent(notes.EventNoteCreated, *n)
	if err != nil {
		return err
	}
	var buf [16]any
	vals := append(s.noteValues(db, n, buf[:0]), eventValues(&ev)...)
	// The note insert and the event insert GORM built at New, joined.
	return db.Exec(s.createSQL, vals...).Error
}
