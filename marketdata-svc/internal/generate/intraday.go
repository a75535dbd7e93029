package generate

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdata"
	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/marketdatadb/ingest"
)

// DayBar is one daily bar that synthetic minutes must agree with.
type DayBar struct {
	Symbol                         string
	Date                           time.Time // the trading day (its calendar date)
	Open, High, Low, Close, Volume float64
}

// Minutes returns deterministic synthetic 1-minute bars of one trading day
// over the regular session of sess in zone, which agree with day exactly:
// the first minute opens at day.Open, the last closes at day.Close, the
// highest high is day.High, the lowest low day.Low, and the volumes add up
// to day.Volume. The same seed, symbol and day give the same bars.
//
// The path is a Brownian bridge from open to close, clamped into
// [low, high] and rounded to cents; one minute touches the day's high and
// another its low. Volume follows the usual U shape of a session (heavier
// at the open and the close), in whole shares.
func Minutes(seed uint64, day DayBar, sess marketdata.Session, zone *time.Location) []ingest.IntradayRow {
	y, m, d := day.Date.Date()
	local := time.Date(y, m, d, 0, 0, 0, 0, zone)
	n := sess.CloseOn(day.Date) - sess.Open
	if n <= 0 {
		return nil
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(day.Symbol))
	_, _ = h.Write([]byte(day.Date.Format(time.DateOnly)))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))

	// p[0] = open, p[n] = close; p[i] closes minute i-1 and opens minute i.
	p := make([]float64, n+1)
	sigma := (day.High - day.Low) / math.Sqrt(float64(n)) / 2
	walk := 0.0
	for i := 1; i <= n; i++ {
		walk += r.NormFloat64() * sigma
		p[i] = walk
	}
	for i := range p { // bridge: pin both ends
		f := float64(i) / float64(n)
		p[i] = day.Open + (day.Close-day.Open)*f + (p[i] - walk*f)
		p[i] = math.Min(day.High, math.Max(day.Low, math.Round(p[i]*100)/100))
	}
	p[0], p[n] = day.Open, day.Close
	hi, lo := r.IntN(n), r.IntN(n)

	weights := make([]float64, n)
	var wsum float64
	for i := range weights {
		x := (float64(i) + 0.5) / float64(n)
		weights[i] = (1 + 3*(x-0.5)*(x-0.5)*4) * (0.5 + r.Float64())
		wsum += weights[i]
	}
	vols := make([]float64, n)
	var vsum float64
	for i := range vols {
		vols[i] = math.Floor(day.Volume * weights[i] / wsum)
		vsum += vols[i]
	}
	// What rounding down left over goes to the closing minute, so the sum
	// is exact (whole shares stay exact in float64 far beyond any volume).
	vols[n-1] += day.Volume - vsum

	rows := make([]ingest.IntradayRow, n)
	for i := range rows {
		o, c := p[i], p[i+1]
		b := ingest.IntradayRow{Symbol: day.Symbol, TS: local.Add(time.Duration(sess.Open+i) * time.Minute).UTC(),
			Open: o, Close: c, High: math.Max(o, c), Low: math.Min(o, c), Volume: vols[i]}
		if i == hi {
			b.High = day.High
		}
		if i == lo {
			b.Low = day.Low
		}
		rows[i] = b
	}
	return rows
}

// SessionDay is a daily bar with the session and zone of its exchange.
type SessionDay struct {
	Day     DayBar
	Session marketdata.Session
	Zone    *time.Location
}

// IntradaySource streams the synthetic minutes of days, a day at a time,
// so that millions of minutes never sit in memory; it implements
// ingest.IntradaySource.
type IntradaySource struct {
	seed uint64
	days []SessionDay
	next int
	buf  []ingest.IntradayRow
	pos  int
}

// NewIntradaySource returns the stream of days' minutes.
func NewIntradaySource(seed uint64, days []SessionDay) *IntradaySource {
	return &IntradaySource{seed: seed, days: days, pos: -1}
}

// Next advances to the next minute.
func (s *IntradaySource) Next() bool {
	for s.pos+1 >= len(s.buf) {
		if s.next >= len(s.days) {
			return false
		}
		d := s.days[s.next]
		s.next++
		s.buf, s.pos = Minutes(s.seed, d.Day, d.Session, d.Zone), -1
	}
	s.pos++
	return true
}

// Row returns the current minute.
func (s *IntradaySource) Row() ingest.IntradayRow { return s.buf[s.pos] }

// Err returns nil: generation cannot fail.
func (s *IntradaySource) Err() error { return nil }
