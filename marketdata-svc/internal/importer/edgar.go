package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
)

// maxEDGARDocument bounds one SEC document read whole (Apple's company
// facts are a few MB).
const maxEDGARDocument = 64 << 20

// ReadEDGAR reads one SEC EDGAR document, as SEC's APIs serve it: a
// company's submissions (data.sec.gov/submissions/CIK##########.json, told
// by its "filings") or its company facts
// (data.sec.gov/api/xbrl/companyfacts/CIK##########.json, told by its
// "facts"). Every bad entry is reported as "name: path: reason", and a
// document with one is refused whole.
func ReadEDGAR(name string, in io.Reader) (marketdata.EDGARCompany, error) {
	var c marketdata.EDGARCompany
	raw, err := io.ReadAll(io.LimitReader(in, maxEDGARDocument+1))
	if err != nil {
		return c, fmt.Errorf("%s: %w", name, err)
	}
	if len(raw) > maxEDGARDocument {
		return c, fmt.Errorf("%s: larger than %d MB", name, maxEDGARDocument>>20)
	}
	var doc struct {
		CIK        json.RawMessage            `json:"cik"`
		Name       string                     `json:"name"`
		EntityName string                     `json:"entityName"`
		Filings    *edgarFilings              `json:"filings"`
		Facts      map[string]json.RawMessage `json:"facts"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return c, fmt.Errorf("%s: not an SEC EDGAR JSON document: %w", name, err)
	}
	var errs RowErrors
	// A JSON document has no lines to name: an entry is named by its path.
	bad := func(path, format string, args ...any) {
		if len(errs.Rows) >= maxReported {
			errs.More++
			return
		}
		errs.Rows = append(errs.Rows, name+": "+path+": "+fmt.Sprintf(format, args...))
	}
	if c.CIK, err = ParseCIK(string(bytes.Trim(doc.CIK, `"`))); err != nil {
		bad("cik", "%v", err)
	}
	switch {
	case doc.Filings != nil:
		c.Name, c.Submissions = doc.Name, raw
		doc.Filings.check(bad)
	case doc.Facts != nil:
		c.Name, c.Facts = doc.EntityName, raw
		checkFacts(doc.Facts, bad)
	default:
		bad("$", "neither submissions (filings) nor company facts (facts)")
	}
	if c.Name == "" {
		bad("name", "empty company name")
	}
	return c, errs.err()
}

var cikDigits = regexp.MustCompile(`^[0-9]{1,10}$`)

// ParseCIK reads a Central Index Key, with or without its leading zeros,
// as its ten digits.
func ParseCIK(s string) (string, error) {
	if !cikDigits.MatchString(s) {
		return "", fmt.Errorf("a CIK has 1 to 10 digits, not %q", s)
	}
	return fmt.Sprintf("%010s", s), nil
}

// edgarFilings is the part of a submissions document checked: the recent
// filings, column by column, one entry per filing.
type edgarFilings struct {
	Recent map[string][]json.RawMessage `json:"recent"`
}

func (f *edgarFilings) check(bad func(path, format string, args ...any)) {
	n := len(f.Recent["accessionNumber"])
	for _, col := range slices.Sorted(maps.Keys(f.Recent)) {
		if len(f.Recent[col]) != n {
			bad("filings.recent."+col, "%d entries, accessionNumber has %d", len(f.Recent[col]), n)
		}
	}
	for _, col := range []string{"filingDate", "reportDate"} {
		for i, v := range f.Recent[col] {
			var d string
			if json.Unmarshal(v, &d) != nil || (d != "" && !isDate(d)) {
				bad(fmt.Sprintf("filings.recent.%s[%d]", col, i), "not a date YYYY-MM-DD: %s", v)
			}
		}
	}
}

func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// edgarFact is the part of a fact checked.
type edgarFact struct {
	End   string          `json:"end"`
	Val   json.RawMessage `json:"val"`
	Accn  string          `json:"accn"`
	Filed string          `json:"filed"`
}

// checkFacts checks every fact of facts (taxonomy, concept, unit): an end
// and filing date, a finite number and an accession number.
func checkFacts(facts map[string]json.RawMessage, bad func(path, format string, args ...any)) {
	for _, tax := range slices.Sorted(maps.Keys(facts)) {
		var concepts map[string]struct {
			Units map[string][]edgarFact `json:"units"`
		}
		if err := json.Unmarshal(facts[tax], &concepts); err != nil {
			bad("facts."+tax, "%v", err)
			continue
		}
		for _, tag := range slices.Sorted(maps.Keys(concepts)) {
			for _, unit := range slices.Sorted(maps.Keys(concepts[tag].Units)) {
				for i, f := range concepts[tag].Units[unit] {
					path := fmt.Sprintf("facts.%s.%s.units.%s[%d]", tax, tag, unit, i)
					v, err := strconv.ParseFloat(string(f.Val), 64)
					switch {
					case !isDate(f.End):
						bad(path, "end is not a date YYYY-MM-DD: %q", f.End)
					case !isDate(f.Filed):
						bad(path, "filed is not a date YYYY-MM-DD: %q", f.Filed)
					case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
						bad(path, "val is not a number: %s", f.Val)
					case f.Accn == "":
						bad(path, "empty accn")
					}
				}
			}
		}
	}
}
