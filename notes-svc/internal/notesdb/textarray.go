package notesdb

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// textArray is a PostgreSQL text[] in a GORM model (the scopes of a key).
// GORM needs a driver.Valuer: it would expand a plain []string argument
// into a list of parameters. The notes' tags never pass here; pgx handles
// them natively.
type textArray []string

// Value encodes a as an array literal with every element quoted. pgx's
// own encoder through a pgtype.Map does the same about 30 times slower
// (see the package comment), and a shared Map would need a lock.
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

// Scan decodes a text[] column with pgx's own parser. Through
// database/sql the array arrives in its text form, which only a
// sql.Scanner can take; pgtype.FlatArray is none, so its Map's SQLScanner
// wraps the target. A Map is not safe for concurrent use, and a fresh one
// per scan costs no more time than a shared one behind a lock.
func (a *textArray) Scan(src any) error {
	if src == nil {
		*a = textArray{}
		return nil
	}
	var out []string
	if err := pgtype.NewMap().SQLScanner(&out).Scan(src); err != nil {
		return fmt.Errorf("scan text[]: %w", err)
	}
	if out == nil {
		out = []string{}
	}
	*a = out
	return nil
}
