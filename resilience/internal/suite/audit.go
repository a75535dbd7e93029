package suite

import "context"

// Audit runs the regression scenarios for the defects the first outside
// audit found. Each scenario reproduces its defect the way the audit did
// and widens it to the class of input the defect belongs to; before the
// fixes each failed, and RELIABILITY.md lists the figures after them.
func Audit(ctx context.Context, e *Env) {
	for _, scenario := range []func(context.Context, *Env){
		// One line per audit item, in the audit's order.
		AuditMetricLabels,
		AuditStalledListings,   // item 2: one tenant can take the whole notes connection pool
		AuditConcurrentImports, // item 4
		AuditConcurrentMigrate, // item 6
	} {
		if ctx.Err() != nil {
			return
		}
		scenario(ctx, e)
	}
}

// AuditIndex is the part of RELIABILITY.md that lists every defect of the
// first outside audit with the cases that keep it fixed. The "before"
// figures were measured by those cases on the code before each fix (the
// commits that fixed them hold the cases); the "after" figures of the
// scenarios are measured by this very run, further down, and the Go tests
// run in every `make test`, which fails if any of them fails.
const AuditIndex = `## Outside audit, round 1: each defect and what keeps it fixed

| # | defect | regression cases | before the fix | after the fix |
|---|---|---|---|---|
| 1 | made-up HTTP methods became metric labels | scenario *Made-up methods and paths against /metrics*; Go: ` + "`TestMetricLabelsStayBounded`" + ` (both services), ` + "`pkg/httpmetrics`" + ` | 1,500 hostile requests grew notes-svc's /metrics by 15.6 MB (15 KB before), marketdata-svc's by 1.0 MB; 501 distinct method labels | /metrics size before and after 3,000 hostile requests (1,000 with 8 KB methods): see the scenario below; every method outside the standard ones counts as OTHER |
| 2 | one tenant's stalled listings took the notes pool | scenario *40 stalled listings by one tenant*; Go: ` + "`TestStalledListingsDoNotHoldConnections`" + `, ` + "`TestBatchedListingMatchesOneStatement`" + ` | other tenants 232 of 240 (96.7 %) with p99 3.0 s, /readyz 27 of 29; pool 5 of 5 held | other tenants' success rate and p99, /readyz: see the scenario below |
| 3 | one caller giving up failed every caller of a shared query | Go: ` + "`TestAbandonedCallerDoesNotFailOthers`" + ` (in-process and Redis cache, EOD and tickers paths), ` + "`TestSharedWorkHasItsOwnDeadline`" + ` | 4 of 4 paths: the waiting caller got ` + "`context canceled`" + ` | 4 of 4 paths: the caller who gave up gets its own error, the waiting one its page |
| 4 | concurrent imports of one symbol left wrong factors for good | scenario *Concurrent imports of one symbol*; Go: ` + "`TestConcurrentLoadsOfOneSymbol`" + ` (4 interleavings of split, dividend and bar loads), ` + "`TestReimportRepairsFactors`" + ` | adj_close 100 on 2009-12-31 (50 is right) in 4 of 4 interleavings; a re-import changed nothing | factors after concurrent imports: see the scenario below; a re-import repairs spoiled factors |
| 5 | the failed-key throttle was racy and locked out valid keys | security check *Failed-authentication throttling* (both services); Go: ` + "`TestConcurrentBadKeysAreBounded`" + `, ` + "`TestValidKeyFromThrottledAddress`" + ` | 200 concurrent bad keys: 200 lookups against a limit of 20; a valid key from the address: 429 for the rest of the minute | lookups from 200 concurrent bad keys, and valid-key success from a throttled address: see the security checks below |
| 6 | marketdata migrate took no lock and ran under the statement timeout | scenario *Concurrent migrations on a fresh database*; Go: ` + "`TestConcurrentMigrations`" + `, ` + "`TestMigrationOutlastsStatementTimeout`" + ` | Go: rounds of 6 concurrent runs on a fresh database failed (` + "`duplicate key … pg_extension_name_index`" + `); a migration waiting on a lock was cancelled at the statement timeout | rounds of concurrent migrations: see the scenario below |
| 7 | nothing bounded the cache's memory in Redis | Go: ` + "`TestQuotaSurvivesCacheEviction`" + `, ` + "`TestPreviousMonthCounterIsDropped`" + `; compose and ` + "`make run`" + ` start Redis with maxmemory 256 MB, volatile-lru | under maxmemory with volatile-lru, 32 MB of pages into 2 MB evicted the usage counter: a quota of 50 with 30 used was reset to 0 | the same pressure evicts only cache entries: usage 30 kept, exactly 20 more requests pass |
| 8 | MARKETDATA_KEY_CACHE_TTL=0 silently meant 30 s | Go: ` + "`TestKeyCacheTTLRange`" + ` (both services), ` + "`TestSettingZeroMeansNoCache`" + ` | marketdata: 0 became 30 s and -1s was accepted; notes: 0 was refused | both: 0 means no key cache (3 verifications, 3 lookups; a revoked key is refused at once), negative and over 60 s refused |
| – | connection reset instead of 413 | Go: ` + "`TestOversizedBodyAlwaysGetsItsAnswer`" + ` (413 with Content-Length and chunked, 401, 415; POST, PUT, PATCH), ` + "`pkg/bodydrain`" + ` | 15 of 30 exchanges of a 16 MiB body (client sends all, then reads) ended in a reset | 0 of 30 for every case |
| – | a registry host name in scripts/testimages.sh | ` + "`scripts/hygiene.sh`" + ` (static checks, with a self-test) | 11 lines named registry hosts (the Debian mirror, the registry of a distroless base image, an example registry) | none: the mirror comes from apt's sources, images are FROM scratch |
| – | stand-in images shadowed official tags | ` + "`scripts/hygiene.sh`" + ` | postgres:15 and redis:7 were the stand-ins' defaults in 5 places | tickerdesk/test-postgres:15 and tickerdesk/test-redis:7 |
`
