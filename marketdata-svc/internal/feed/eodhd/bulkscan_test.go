package eodhd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
)

// reference reads a bulk answer with encoding/json, as the adapter did
// before rowScanner, and requires the closing bracket.
func reference(data []byte) ([]eodRow, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, errors.New("not a list")
	}
	var rows []eodRow
	for dec.More() {
		var r eodRow
		if err := dec.Decode(&r); err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim(']') {
		return rows, errors.New("no closing bracket")
	}
	return rows, nil
}

// scan reads a bulk answer with rowScanner from r.
func scan(r *rowScanner) ([]eodRow, error) {
	if err := r.start(); err != nil {
		return nil, err
	}
	var rows []eodRow
	for {
		var row eodRow
		ok, err := r.next(&row, len(rows) == 0)
		if err != nil {
			return rows, err
		}
		if !ok {
			return rows, nil
		}
		rows = append(rows, row)
	}
}

// FuzzRowScanner holds rowScanner to encoding/json: the same rows, or an
// error from both, for any input, read whole or a byte at a time.
func FuzzRowScanner(f *testing.F) {
	for _, s := range []string{
		`[]`, ` [ ] `, `[{}]`, `[null]`, `[1]`, `["x"]`, `[{"code":"A"}`, `[{"code":"A"},]`, `[{"code":"A"}}`,
		`[{"code":"AAPL","exchange_short_name":"US","date":"2024-03-08","open":12.95,"high":13.1,"low":12.85,"close":13,"volume":1000,"adjusted_close":13}]`,
		`[{"code":"A","open":"12.5","high":"x","low":null,"close":1e400,"volume":true},{"Code":"B","CLOSE":-0.5e-3}]`,
		`[{"code":"A\u00e9\"\\\/","date":"2024-03-08","x":{"y":[1,{"z":"]}"}]},"close":{"a":1}}]`,
		`[{"code":1}]`, `[{"code":"A","code":2,"open":01}]`, `[{"code":"\xff"}]`, `[{"clo\u0073e":2}]`, `[{"open":-}]`, `[{"open":1.}]`,
		`[{"code":"A" "date":"x"}]`, `[{"code":"a\tb"}]`, `[{"volume":[1, 2 ,3]}]`, `[{"low":nul}]`, `[{"low":nullx}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := reference(data)
		for _, r := range []*rowScanner{newRowScanner(bytes.NewReader(data)), newRowScanner(iotest.OneByteReader(bytes.NewReader(data)))} {
			got, err := scan(r)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("%q: error %v, encoding/json's %v", data, err, wantErr)
			}
			if err == nil && fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
				t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
			}
		}
	})
}

// bulkDay is a bulk answer of n rows as EODHD writes them.
func bulkDay(n int) []byte {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"code":"S%05d","exchange_short_name":"US","date":"2024-03-08","open":%.2f,"high":%.2f,"low":%.2f,"close":%.2f,"volume":%d,"adjusted_close":%.2f}`,
			i, 12.95+float64(i%100), 13.1+float64(i%100), 12.85+float64(i%100), 13.0+float64(i%100), 1000+i, 13.0+float64(i%100))
	}
	b.WriteString("]")
	return []byte(b.String())
}

// BenchmarkBulkRows reads a 50,000-row bulk day with rowScanner and with
// encoding/json's Decoder (the figures are in the package comment).
func BenchmarkBulkRows(b *testing.B) {
	data := bulkDay(50_000)
	b.Run("rowScanner", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sc := newRowScanner(bytes.NewReader(data))
			if err := sc.start(); err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				var r eodRow
				ok, err := sc.next(&r, n == 0)
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					break
				}
				n++
			}
			if n != 50_000 {
				b.Fatal(n)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(data))
			if _, err := dec.Token(); err != nil {
				b.Fatal(err)
			}
			n := 0
			for dec.More() {
				var r eodRow
				if err := dec.Decode(&r); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 50_000 {
				b.Fatal(n)
			}
		}
	})
}
