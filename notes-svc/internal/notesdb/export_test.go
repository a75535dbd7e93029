package notesdb

import (
	"database/sql/driver"

	"gorm.io/gorm"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// ListingStatements are the statements of a listing of q for accountID, as
// the store builds them: its count, its first batch, and a batch after
// after, each its SQL then its arguments (as the driver gets them), for
// tests that look at their plans.
func (s *Store) ListingStatements(accountID string, q notes.ListQuery, after notes.Note) [][]any {
	dry := func() *gorm.DB { return s.db.Session(&gorm.Session{DryRun: true, NewDB: true}) }
	var out [][]any
	for _, db := range []*gorm.DB{
		dry().Scopes(noteFilter(accountID, q)).Count(new(int64)),
		s.listQuery(dry(), accountID, q, nil, q.Offset, 20).Find(&[]notes.Note{}),
		s.listQuery(dry(), accountID, q, &after, 0, 20).Find(&[]notes.Note{}),
	} {
		stmt := append([]any{db.Statement.SQL.String()}, db.Statement.Vars...)
		for i, v := range stmt[1:] {
			if valuer, ok := v.(driver.Valuer); ok {
				stmt[i+1], _ = valuer.Value()
			}
		}
		out = append(out, stmt)
	}
	return out
}
