package notesdb

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgtype"
)

// textArray is a PostgreSQL text[] for GORM. GORM would expand a plain
// []string argument into a list of parameters, so the array travels as
// one value in PostgreSQL's array literal syntax.
type textArray []string

// Value encodes a as an array literal with every element quoted.
func (a textArray) Value() (driver.Value, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range s {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), nil
}

// arrayTypes decodes array literals; a pgtype.Map is not safe for
// concurrent use, hence the lock.
var arrayTypes = struct {
	sync.Mutex
	m *pgtype.Map
}{m: pgtype.NewMap()}

// Scan decodes a text[] column.
func (a *textArray) Scan(src any) error {
	if src == nil {
		*a = textArray{}
		return nil
	}
	var out []string
	arrayTypes.Lock()
	err := arrayTypes.m.SQLScanner(&out).Scan(src)
	arrayTypes.Unlock()
	if err != nil {
		return fmt.Errorf("scan text[]: %w", err)
	}
	if out == nil {
		out = []string{}
	}
	*a = out
	return nil
}
