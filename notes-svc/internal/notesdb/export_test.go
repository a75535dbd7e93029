package notesdb

import "github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"

// ListingStatements are the statements of a listing of q for accountID:
// its count, its first batch, and a batch after after, for tests that
// look at their plans.
func ListingStatements(accountID string, q notes.ListQuery, after notes.Note) [][]any {
	srt, ok := listSorts[q.Sort]
	if !ok {
		srt = listSorts[notes.SortCreatedAsc]
	}
	var out [][]any
	for _, s := range []func() (string, []any){
		func() (string, []any) { return countSQL(accountID, q) },
		func() (string, []any) { return listSQL(accountID, q, srt, nil, q.Offset, 20) },
		func() (string, []any) { return listSQL(accountID, q, srt, &after, 0, 20) },
	} {
		query, args := s()
		out = append(out, append([]any{query}, args...))
	}
	return out
}
