package eodhd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/feed"
)

// rowScanner reads the rows of a bulk answer, a JSON array of flat
// objects, one at a time, into eodRow exactly as encoding/json would (the
// fuzz test holds it to that): keys matched without regard to case, the
// last of a repeated key winning, unknown members of any shape skipped,
// a Number member given its raw value as feed.Number.UnmarshalJSON reads
// it, and an answer encoding/json refuses refused. It exists for speed
// alone: encoding/json's Decoder spent more on a 50,000-row day than
// storing the day did (see the package comment for the figures).
type rowScanner struct {
	r    io.Reader
	buf  []byte
	i, n int
	rerr error // the reader's error, io.EOF at the end
	raw  []byte
	key  []byte
}

func newRowScanner(r io.Reader) *rowScanner {
	return &rowScanner{r: r, buf: make([]byte, 64<<10)}
}

// errSyntax is the error of an answer that is not JSON.
var errSyntax = errors.New("invalid JSON")

// more reports whether the buffer holds a byte, reading when it is empty.
func (s *rowScanner) more() bool {
	for s.i == s.n {
		if s.rerr != nil {
			return false
		}
		s.i = 0
		s.n, s.rerr = s.r.Read(s.buf)
	}
	return true
}

// eof is the error of input that ends inside a value.
func (s *rowScanner) eof() error {
	if s.rerr != nil && s.rerr != io.EOF {
		return s.rerr
	}
	return io.ErrUnexpectedEOF
}

// skipSpace skips whitespace and returns the next byte, unread.
func (s *rowScanner) skipSpace() (byte, error) {
	for s.more() {
		switch c := s.buf[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c, nil
		}
	}
	return 0, s.eof()
}

// errNotList is the error of an answer that is not a JSON array.
var errNotList = errors.New("bulk answer is not a list")

// start reads the opening bracket of the answer.
func (s *rowScanner) start() error {
	c, err := s.skipSpace()
	if err != nil && err != io.ErrUnexpectedEOF {
		return err
	}
	if err != nil || c != '[' {
		return errNotList
	}
	s.i++
	return nil
}

// after reads sep, which must come next after whitespace, and returns the
// byte after the whitespace that follows it, unread.
func (s *rowScanner) after(sep byte) (byte, error) {
	c, err := s.skipSpace()
	if err != nil {
		return 0, err
	}
	if c != sep {
		return 0, errSyntax
	}
	s.i++
	return s.skipSpace()
}

// next reads the next row into r; ok is false at the end of the list.
func (s *rowScanner) next(r *eodRow, first bool) (ok bool, err error) {
	c, err := s.skipSpace()
	if err != nil {
		return false, err
	}
	if c == ']' {
		s.i++
		return false, nil
	}
	if !first {
		if c, err = s.after(','); err != nil {
			return false, err
		}
	}
	if c != '{' {
		if err := s.value(); err != nil {
			return false, err
		}
		if s.raw[0] == 'n' {
			*r = eodRow{} // null decodes to an empty row
			return true, nil
		}
		return false, fmt.Errorf("a row is %s, not an object", kind(s.raw[0]))
	}
	*r = eodRow{}
	var typeErr error
	for c, err = s.after('{'); c != '}'; {
		if err != nil {
			return false, err
		}
		if c != '"' {
			return false, errSyntax
		}
		if err := s.value(); err != nil {
			return false, err
		}
		key, err := s.text()
		if err != nil {
			return false, err
		}
		s.key = append(s.key[:0], key...)
		if _, err := s.after(':'); err != nil {
			return false, err
		}
		if err := s.value(); err != nil {
			return false, err
		}
		if err := s.member(r, s.key); err != nil && typeErr == nil {
			typeErr = err
		}
		if c, err = s.skipSpace(); err == nil && c == ',' {
			if c, err = s.after(','); err == nil && c != '"' {
				return false, errSyntax // a comma before the closing brace
			}
		} else if err == nil && c != '}' {
			return false, errSyntax
		}
	}
	s.i++
	return true, typeErr
}

// member stores the value just read (s.raw) in r's field named key.
func (s *rowScanner) member(r *eodRow, key []byte) error {
	// The members in field's order: two strings, then five numbers.
	strs := [...]*string{&r.Code, &r.Date}
	nums := [...]*feed.Number{&r.Open, &r.High, &r.Low, &r.Close, &r.Volume}
	var num *feed.Number
	var str *string
	switch i := field(key); {
	case i < 0:
		return nil
	case i < len(strs):
		str = strs[i]
	default:
		num = nums[i-len(strs)]
	}
	c := s.raw[0]
	if num != nil {
		if c == '-' || c >= '0' && c <= '9' {
			if v, err := strconv.ParseFloat(string(s.raw), 64); err == nil {
				*num = feed.Number{V: v, Set: true}
				return nil
			}
		}
		return num.UnmarshalJSON(s.raw)
	}
	switch c {
	case 'n':
		return nil // null leaves a string as it is
	case '"':
		t, err := s.text()
		if err != nil {
			return err
		}
		*str = string(t)
		return nil
	}
	return fmt.Errorf("%s is %s, not a string", key, kind(c))
}

// field is the index of the member key names (code, date, open, high,
// low, close, volume), matched as encoding/json matches keys (equal under
// Unicode case folding, an exact match first), or -1.
func field(key []byte) int {
	names := [...]string{"code", "date", "open", "high", "low", "close", "volume"}
	for i, name := range names {
		if string(key) == name {
			return i
		}
	}
	for i, name := range names {
		if bytes.EqualFold(key, []byte(name)) {
			return i
		}
	}
	return -1
}

func kind(c byte) string {
	switch c {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// text decodes the string value just read (s.raw, quotes included).
func (s *rowScanner) text() ([]byte, error) {
	body := s.raw[1 : len(s.raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return body, nil
	}
	var t string // escapes and invalid UTF-8 as encoding/json reads them
	if err := json.Unmarshal(s.raw, &t); err != nil {
		return nil, errSyntax
	}
	return []byte(t), nil
}

// value reads one JSON value, whatever its shape, into s.raw as written.
func (s *rowScanner) value() error {
	s.raw = s.raw[:0]
	if !s.more() {
		return s.eof()
	}
	switch c := s.buf[s.i]; {
	case c == '"':
		return s.str()
	case c == '{' || c == '[':
		return s.nested()
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return errSyntax
}

// str appends a string to s.raw, quotes included; control characters
// and bad escapes are refused.
func (s *rowScanner) str() error {
	start := len(s.raw)
	s.raw = append(s.raw, '"')
	s.i++
	esc, escaped := false, false
	for s.more() {
		chunk := s.buf[s.i:s.n]
		for j, c := range chunk {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc, escaped = true, true
			case c == '"':
				s.raw = append(s.raw, chunk[:j+1]...)
				s.i += j + 1
				if escaped && !json.Valid(s.raw[start:]) {
					return errSyntax
				}
				return nil
			case c < 0x20:
				return errSyntax
			}
		}
		s.raw = append(s.raw, chunk...)
		s.i = s.n
	}
	return s.eof()
}

// number reads a number and checks it against JSON's grammar.
func (s *rowScanner) number() error {
	for s.more() {
		c := s.buf[s.i]
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		s.raw = append(s.raw, c)
		s.i++
	}
	if s.rerr != nil && s.rerr != io.EOF {
		return s.rerr
	}
	if !validNumber(s.raw) {
		return errSyntax
	}
	return nil
}

// validNumber: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	digits := func() int {
		n := 0
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		b = b[n:]
		return n
	}
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	switch {
	case len(b) > 0 && b[0] == '0':
		b = b[1:]
	case digits() == 0:
		return false
	}
	if len(b) > 0 && b[0] == '.' {
		b = b[1:]
		if digits() == 0 {
			return false
		}
	}
	if len(b) > 0 && (b[0] == 'e' || b[0] == 'E') {
		b = b[1:]
		if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
			b = b[1:]
		}
		if digits() == 0 {
			return false
		}
	}
	return len(b) == 0
}

func (s *rowScanner) literal(word string) error {
	for k := 0; k < len(word); k++ {
		if !s.more() {
			return s.eof()
		}
		if s.buf[s.i] != word[k] {
			return errSyntax
		}
		s.raw = append(s.raw, word[k])
		s.i++
	}
	return nil
}

// nested reads an object or an array, checking its syntax only as far as
// keeping strings and brackets apart; json.Valid checks the rest.
func (s *rowScanner) nested() error {
	var stack []byte
	for s.more() {
		c := s.buf[s.i]
		switch c {
		case '"':
			if err := s.str(); err != nil { // appends to s.raw
				return err
			}
			continue
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
				return errSyntax
			}
			stack = stack[:len(stack)-1]
		}
		s.raw = append(s.raw, c)
		s.i++
		if len(stack) == 0 {
			if !json.Valid(s.raw) {
				return errSyntax
			}
			return nil
		}
	}
	return s.eof()
}
