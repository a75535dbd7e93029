package ingest

// SliceSource is a BarSource over bars held in memory; Bars returns a
// fresh one for Load.Bars.
type SliceSource struct {
	rows []BarRow
	i    int
}

// Bars returns a Load.Bars function that streams rows.
func Bars(rows []BarRow) func() (BarSource, error) {
	return func() (BarSource, error) { return &SliceSource{rows: rows, i: -1}, nil }
}

// Next advances to the next bar.
func (s *SliceSource) Next() bool {
	s.i++
	return s.i < len(s.rows)
}

// Bar returns the current bar.
func (s *SliceSource) Bar() BarRow { return s.rows[s.i] }

// Err always returns nil: a slice cannot fail.
func (s *SliceSource) Err() error { return nil }
