package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// AuditQuotaDurable checks that monthly usage survives a Redis restart.
// Redis runs without persistence, so a restart empties it; before the
// durable copy of the usage counters, a key with a quota of 300 got 600
// requests across one. A key uses 200 of 300, the copy interval passes,
// Redis restarts, and paced requests continue: the key gets its last 100
// plus at most what it sent in one copy interval after the restart (the
// documented bound, with 2.5 lease batches), and is then refused for its
// quota.
func AuditQuotaDurable(ctx context.Context, e *Env) {
	s := e.Report.Scenario("Monthly quota across a Redis restart (marketdata-svc)")
	const quota, before, after = 300, 200, 300
	// The default MARKETDATA_USAGE_SYNC_INTERVAL, and the pace after the
	// restart: one interval's worth is 100 requests.
	const interval, pace = 5 * time.Second, 50 * time.Millisecond
	key, err := e.Market.CreateKey(ctx, "--account", "audit2-quota", "--rate-per-second", "100000", "--monthly-quota", fmt.Sprint(quota))
	if err != nil {
		s.Check("setup", false, "%v", err)
		return
	}
	e.Secret(key, "marketdata durable quota key")
	statuses := map[int]int{}
	send := func() (status int, code string) {
		resp, err := e.Do(e.MarketRequest(http.MethodGet, marketQueries[0], key))
		if err != nil {
			statuses[0]++
			return 0, ""
		}
		statuses[resp.Status]++
		var m struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(resp.Body, &m)
		return resp.Status, m.Error.Code
	}
	okBefore := 0
	for range before {
		if st, _ := send(); st == http.StatusOK {
			okBefore++
		}
	}
	// One copy interval and a margin: the usage is in the database.
	time.Sleep(interval + 2*time.Second)
	stopErr := e.Stack.StopRedis(ctx)
	startErr := e.Stack.StartRedis(ctx)
	s.Check("Redis stopped and restarted (its data gone)", stopErr == nil && startErr == nil, "stop: %v, start: %v", stopErr, startErr)
	okAfter, lastStatus, lastCode := 0, 0, ""
	for range after {
		if ctx.Err() != nil {
			return
		}
		st, code := send()
		if st == http.StatusOK {
			okAfter++
		}
		lastStatus, lastCode = st, code
		time.Sleep(pace)
	}
	perInterval := int(interval / pace)
	// 2.5 leases of a quota of 300 (leases of 3).
	bound := quota + perInterval + 8
	s.Sent = before + after
	s.Outcomes = statusString(statuses)
	s.Failed = max(okBefore+okAfter-bound, 0)
	s.Check("the first requests are served", okBefore == before, "%d of %d", okBefore, before)
	s.Check("at most one copy interval's requests beyond the quota", okBefore+okAfter <= bound,
		"%d + %d served across the restart of a quota of %d (bound %d; %d would be a quota given again)",
		okBefore, okAfter, quota, bound, before+quota)
	s.Check("the key ends refused for its quota", lastStatus == http.StatusTooManyRequests && lastCode == "usage_limit_reached",
		"last request: %d %s", lastStatus, lastCode)
}
