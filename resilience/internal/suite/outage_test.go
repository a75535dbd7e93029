package suite

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/resilience/internal/report"
)

func TestOutageRecordsWhenTheDependencyWasGone(t *testing.T) {
	var stopped, started time.Time
	o := startOutage(context.Background(),
		func(context.Context) error { stopped = time.Now(); return nil },
		func(context.Context) error { started = time.Now(); return errors.New("port taken") },
		100*time.Millisecond)
	o.wait()
	if o.down.After(stopped) || o.up.Before(started) || started.Sub(stopped) < 100*time.Millisecond {
		t.Errorf("down %v, stop %v, start %v, up %v: want down <= stop, start - stop >= 100ms, start <= up", o.down, stopped, started, o.up)
	}
	s := report.New().Scenario("x")
	o.check(s, "Redis")
	if len(s.Checks) != 1 || s.Checks[0].OK || s.Checks[0].Name != "Redis stopped and restarted" || !strings.Contains(s.Checks[0].Detail, "start: port taken") {
		t.Errorf("checks = %+v, want one failed Redis check naming the start error", s.Checks)
	}
}
