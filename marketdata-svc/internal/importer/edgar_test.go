package importer

import (
	"strings"
	"testing"
)

// TestReadEDGAR reads SEC's two documents, tells them apart, and reports
// every bad entry by its path, refusing the document.
func TestReadEDGAR(t *testing.T) {
	c, err := ReadEDGAR("s.json", strings.NewReader(`{"cik":"42","name":"Example","filings":{"recent":{"accessionNumber":["a"],"filingDate":["2025-01-02"],"reportDate":[""]},"files":[]}}`))
	if err != nil || c.CIK != "0000000042" || c.Name != "Example" || c.Submissions == nil || c.Facts != nil {
		t.Errorf("submissions: %+v %v", c, err)
	}
	c, err = ReadEDGAR("f.json", strings.NewReader(`{"cik":42,"entityName":"Example","facts":{"us-gaap":{"X":{"units":{"USD":[{"end":"2024-12-31","val":1,"accn":"a","filed":"2025-01-02"}]}}}}}`))
	if err != nil || c.CIK != "0000000042" || c.Facts == nil || c.Submissions != nil {
		t.Errorf("facts: %+v %v", c, err)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"cik":"x","name":"E","filings":{"recent":{}}}`, "s.json: cik: a CIK has 1 to 10 digits"},
		{`{"cik":"1","name":"E","filings":{"recent":{"accessionNumber":["a","b"],"form":["10-K"]}}}`, "s.json: filings.recent.form: 1 entries"},
		{`{"cik":"1","name":"E","filings":{"recent":{"accessionNumber":["a"],"filingDate":["soon"]}}}`, "s.json: filings.recent.filingDate[0]: not a date"},
		{`{"cik":1,"entityName":"E","facts":{"us-gaap":{"X":{"units":{"USD":[{"end":"2024-12-31","val":"1","accn":"a","filed":"2025-01-02"}]}}}}}`, "s.json: facts.us-gaap.X.units.USD[0]: val is not a number"},
		{`{"cik":1,"entityName":"","facts":{}}`, "s.json: name: empty company name"},
		{`{"cik":1,"name":"E"}`, "s.json: $: neither submissions"},
		{`[1,2]`, "s.json: not an SEC EDGAR JSON document"},
	} {
		if _, err := ReadEDGAR("s.json", strings.NewReader(tc.doc)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.want)
		}
	}
}
