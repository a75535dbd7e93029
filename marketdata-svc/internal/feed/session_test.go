package feed

import (
	"testing"
	"time"
)

func TestLastSession(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ now, want string }{
		{"2024-03-06T22:59:00Z", "2024-03-05"}, // Wednesday 17:59 in New York: not settled
		{"2024-03-06T23:00:00Z", "2024-03-06"}, // 18:00: Wednesday's session
		{"2024-03-06T20:00:00Z", "2024-03-05"}, // 15:00: Tuesday's
		{"2024-03-09T15:00:00Z", "2024-03-08"}, // Saturday: Friday's
		{"2024-03-11T13:00:00Z", "2024-03-08"}, // Monday morning: Friday's
		{"2024-03-07T02:00:00Z", "2024-03-06"}, // Thursday 02:00 UTC is Wednesday 21:00 in New York
	} {
		now, _ := time.Parse(time.RFC3339, c.now)
		if got := LastSession(now, ny).Format(time.DateOnly); got != c.want {
			t.Errorf("LastSession(%s) = %s, want %s", c.now, got, c.want)
		}
	}
}
