package marketdata

import "time"

// Session is an exchange's regular trading session in its own time zone:
// Open and Close are minutes after local midnight, Close exclusive.
// EarlyCloses maps a local date (YYYY-MM-DD) to the Close of a shortened
// session (a half day).
type Session struct {
	Open, Close int
	EarlyCloses map[string]int
}

// usEarlyCloses are the 13:00 closes of the US exchanges (the day after
// Thanksgiving, Christmas Eve, July 3) of the years this service has data
// for or serves now. Other years have none listed: their half days are
// served as full sessions, documented in docs/DATA.md.
var usEarlyCloses = map[string]int{
	"2003-07-03": 780, "2003-11-28": 780, "2003-12-24": 780, "2003-12-26": 780,
	"2004-11-26": 780, "2005-11-25": 780, "2006-07-03": 780, "2006-11-24": 780,
	"2007-07-03": 780, "2007-11-23": 780, "2007-12-24": 780,
	"2008-07-03": 780, "2008-11-28": 780, "2008-12-24": 780,
	"2023-07-03": 780, "2023-11-24": 780,
	"2024-07-03": 780, "2024-11-29": 780, "2024-12-24": 780,
	"2025-07-03": 780, "2025-11-28": 780, "2025-12-24": 780,
	"2026-11-27": 780, "2026-12-24": 780,
}

// sessions are the regular sessions of the exchanges the service knows, by
// marketstack code. Lunch breaks (Tokyo, Hong Kong, Shanghai) are not
// modelled: their bars count as regular hours.
var sessions = map[string]Session{
	"XNAS":  {Open: 570, Close: 960, EarlyCloses: usEarlyCloses},
	"XNYS":  {Open: 570, Close: 960, EarlyCloses: usEarlyCloses},
	"INDX":  {Open: 570, Close: 960, EarlyCloses: usEarlyCloses},
	"IEXG":  {Open: 570, Close: 960, EarlyCloses: usEarlyCloses},
	"XTSE":  {Open: 570, Close: 960},
	"XLON":  {Open: 480, Close: 990},
	"XPAR":  {Open: 540, Close: 1050},
	"XAMS":  {Open: 540, Close: 1050},
	"XETRA": {Open: 540, Close: 1050},
	"XSWX":  {Open: 540, Close: 1050},
	"XSTO":  {Open: 540, Close: 1050},
	"XTKS":  {Open: 540, Close: 900},
	"XASX":  {Open: 600, Close: 960},
	"XHKG":  {Open: 570, Close: 960},
	"XSHG":  {Open: 570, Close: 900},
	"XSHE":  {Open: 570, Close: 900},
	"XNSE":  {Open: 555, Close: 930},
	"XBOM":  {Open: 555, Close: 930},
	"XKRX":  {Open: 540, Close: 930},
	// The synthetic exchange of generated data trades New York's hours
	// in UTC, so generated minute bars look like a US session.
	"XSYN": {Open: 570, Close: 960},
}

// SessionOf returns the regular session of an exchange. An exchange
// without a known session trades all day: every bar is regular and buckets
// align to local midnight.
func SessionOf(mic string) Session {
	if s, ok := sessions[mic]; ok {
		return s
	}
	return Session{Open: 0, Close: DayMinutes}
}

// CloseOn is the session's close on a local date.
func (s Session) CloseOn(day time.Time) int {
	if c, ok := s.EarlyCloses[day.Format(time.DateOnly)]; ok {
		return c
	}
	return s.Close
}
