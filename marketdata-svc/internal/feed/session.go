package feed

import "time"

// SessionSettled is the local hour after which a weekday's session counts
// as completed: two hours after the usual 16:00 close, when providers have
// published the day (Tiingo at 17:30 ET, with corrections until 20:00, so
// a --lookback run takes those).
const SessionSettled = 18

// LastSession is the last completed trading session at now in zone: today
// from SessionSettled on a weekday, else the weekday before. Exchange
// holidays are not known here: a holiday's window simply brings no bars,
// and nothing is recorded for it.
func LastSession(now time.Time, zone *time.Location) time.Time {
	local := now.In(zone)
	d := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, time.UTC)
	if local.Hour() < SessionSettled {
		d = d.AddDate(0, 0, -1)
	}
	for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
		d = d.AddDate(0, 0, -1)
	}
	return d
}
