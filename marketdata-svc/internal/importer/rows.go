package importer

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// rowFile is the reading that price and intraday files share: one CSV
// file after its header, its bad rows collected and reported by Err once
// the file is read, as *RowErrors.
type rowFile struct {
	name    string
	file    io.Closer
	r       *csv.Reader
	width   int // fields a row needs
	errs    RowErrors
	readErr error
	key     rowKey
}

// openRowFile starts reading CSV rows from r, named name in error
// messages, and returns the header; rf closes r when r is a Closer.
func openRowFile(name string, r io.Reader) (rf rowFile, header []string, err error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 256*1024))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	if header, err = readHeader(cr, name); err != nil {
		return rowFile{}, nil, err
	}
	rf = rowFile{name: name, r: cr}
	if c, ok := r.(io.Closer); ok {
		rf.file = c
	}
	return rf, header, nil
}

// Close closes the file.
func (p *rowFile) Close() error {
	if p.file == nil {
		return nil
	}
	err := p.file.Close()
	p.file = nil
	return err
}

// next reads up to the next row that parse accepts; a row too short, a
// malformed or a blank one is recorded or passed over before parse sees it.
func (p *rowFile) next(parse func(rec []string, line int) bool) bool {
	for {
		rec, err := p.r.Read()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				p.errs.add(p.name, pe.Line, "%v", pe.Err)
				continue
			}
			p.readErr = fmt.Errorf("%s: %w", p.name, err)
			return false
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // blank line
		}
		line, _ := p.r.FieldPos(0) // only valid after a successful Read
		if len(rec) < p.width {
			p.errs.add(p.name, line, "expected %d fields, got %d", p.width, len(rec))
			continue
		}
		if parse(rec, line) {
			return true
		}
	}
}

// rowKey says whose a row is and for which period, as price and intraday
// files both read it.
type rowKey struct {
	symbol    string // fixed for the file; "" reads symbolCol
	symbolCol int
	// periodCol (-1: none) must say period, described as periodName in
	// errors.
	periodCol          int
	period, periodName string
}

// keyRows sets how rows name their symbol and period; a file that names
// no symbol, neither fixed nor in a column, is refused.
func (p *rowFile) keyRows(k rowKey) error {
	if k.symbol == "" && k.symbolCol < 0 {
		return fmt.Errorf("%s: %w", p.name, errNoSymbol)
	}
	p.key = k
	return nil
}

// rowSymbol is a row's symbol: the file's fixed one, else its column,
// which must not be empty. A row of another period has none.
func (p *rowFile) rowSymbol(rec []string, line int) (string, bool) {
	k := p.key
	if k.periodCol >= 0 && strings.TrimSpace(rec[k.periodCol]) != k.period {
		p.errs.add(p.name, line, "period %q is not %s", rec[k.periodCol], k.periodName)
		return "", false
	}
	if k.symbol != "" {
		return k.symbol, true
	}
	s := normalizeSymbol(rec[k.symbolCol])
	if s == "" {
		p.errs.add(p.name, line, "empty symbol")
	}
	return s, s != ""
}

// number is a numeric column of a row and where its value goes.
type number struct {
	name string
	col  int // -1: not in the file
	dst  *float64
	// optional columns may be empty in a row.
	optional bool
}

// numbers parses each of nums present in rec; the first bad one is
// recorded and fails the row.
func (p *rowFile) numbers(rec []string, line int, nums ...number) bool {
	for _, n := range nums {
		if n.col < 0 || (n.optional && strings.TrimSpace(rec[n.col]) == "") {
			continue
		}
		v, err := parseNumber(n.name, rec[n.col])
		if err != nil {
			p.errs.add(p.name, line, "%v", err)
			return false
		}
		*n.dst = v
	}
	return true
}

// Err reports a read failure or, once the file is read, its bad rows.
func (p *rowFile) Err() error {
	if p.readErr != nil {
		return p.readErr
	}
	return p.errs.err()
}
