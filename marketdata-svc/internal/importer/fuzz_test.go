package importer_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/importer"
)

// FuzzPriceCSV feeds arbitrary files to the price reader: it must never
// panic, every row it accepts must be a plausible bar, and every row it
// rejects must be reported as file:line: reason.
func FuzzPriceCSV(f *testing.F) {
	for _, seed := range []string{
		"Date,Open,High,Low,Close,Adj Close,Volume\n2008-10-14,393.53,394.50,357.00,362.71,362.71,7784800\n",
		"Date,Open,High,Low,Close,Volume,Adj. Close*\n19-Sep-03,29.76,29.97,29.52,29.96,92433800,29.79\n",
		"date,open,high,low,close,adjclose,volume\n2000-01-03,1469.250000,1478.000000,1438.359985,1455.219971,1455.219971,931800000",
		"<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>\nIBM.US,D,20240102,000000,161.5,163.3,160.9,163.1,4130000,0\n",
		"date,close,high,low,open,volume,adjClose,adjHigh,adjLow,adjOpen,adjVolume,divCash,splitFactor\n2020-08-31T00:00:00.000Z,129.04,131.0,126.0,127.58,225702700,129.04,131.0,126.0,127.58,225702700,0.0,4:1\n",
		"symbol,date,open,high,low,close,volume\nX,2024-01-02,1,NaN,1,1,1\n,2024-01-03,1,1,1,1,1e309\n",
		"Date,Open,High,Low,Close\n2024-02-30,1,2,3,4\n\"unterminated,1\n",
		"Date,Open,High,Low,Close,Volume\n2024-01-10,null,null,null,null,null\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		p, err := importer.NewPrices("f.csv", strings.NewReader(data), "")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv") {
				t.Fatalf("open error without the file name: %v", err)
			}
			return
		}
		for p.Next() {
			b := p.Bar()
			for _, v := range []float64{b.Open, b.High, b.Low, b.Close, b.Volume, b.Dividend} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("accepted bad number in %+v", b)
				}
			}
			if b.High < b.Low || b.Symbol == "" || b.Date.IsZero() || b.Line < 2 {
				t.Fatalf("accepted implausible bar %+v", b)
			}
			if b.SplitFactor != 0 && !(b.SplitFactor > 0) {
				t.Fatalf("accepted bad split %+v", b)
			}
		}
		var rows *importer.RowErrors
		if err := p.Err(); err != nil && errors.As(err, &rows) {
			for _, r := range rows.Rows {
				if !strings.HasPrefix(r, "f.csv:") {
					t.Fatalf("row error not in file:line form: %q", r)
				}
			}
		}
	})
}
