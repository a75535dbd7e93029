package suite

import "context"

// AuditRound2 runs the regression scenarios for the defects a second
// outside audit found in the cache, the limiters, the replica router and
// the query paths. Each scenario reproduces its defect the way the audit
// did and widens it to the defect's class; before the fixes each failed.
// The items whose regression cases are Go tests (they run in `make test`,
// which fails if any of them fails) have no scenario here: AuditRound2Index
// names their tests.
func AuditRound2(ctx context.Context, e *Env) {
	for _, scenario := range []func(context.Context, *Env){
		// In the audit's order.
		AuditSearchCost,
		AuditUnboundedQueries,
		AuditQuotaDurable,
	} {
		if ctx.Err() != nil {
			return
		}
		scenario(ctx, e)
	}
}

// AuditRound2Index is the part of RELIABILITY.md that lists every defect of
// the second outside audit with the cases that keep it fixed. The "before"
// figures were measured by those cases on the code before each fix; the
// "after" figures of the Go tests were measured by the same tests after it,
// and those of the scenarios by this very run, further down.
const AuditRound2Index = `## Outside audit, round 2: each defect and what keeps it fixed

| # | severity | defect | regression cases | before the fix | after the fix |
|---|---|---|---|---|---|
| 1 | HIGH | a negated search made one tenant read every tenant's notes | scenario *negated searches by a tenant of 15 notes among 200,000*; Go: ` + "`TestSearchCostIsTheCallersOwn`" + ` (12 query shapes: word, negation, negated phrase, phrase, prefix, word or negation, stop words only, negated stop word, tag, two tags, tag and word, tag and negation; count, first batch and keyset batch; at 100 and at 5,000 other accounts, read from EXPLAIN (ANALYZE, BUFFERS) of the service's own generic plan) | negation read 4,020 rows / 127 buffers at 100 other accounts and 43,220 / 1,392 at 5,000; scenario: ` + "`-\"alpha bravo\"`" + ` never answered, the other tenant's listing 13 of 100 answered, p50 3.0 s | every shape at most 60 rows and 12 buffers at both sizes (negation: 20 / 6 and 20 / 8); scenario figures below |
| 1b | HIGH | notes-svc had no per-key rate limit | Go: ` + "`TestRateLimitPerKey`" + `, ` + "`TestRateLimitOff`" + `, ` + "`TestRateLimitSetting`" + `, ` + "`pkg/keyrate`" + ` (the GCRA and the headers both services now share) | no limit, no rate headers | ` + "`NOTES_RATE_LIMIT_PER_SECOND`" + ` (50 by default, per instance), marketdata's headers and 429 with Retry-After |
| 2 | HIGH | one limit=1 intraday request aggregated the whole minute history; ` + "`total`" + ` recomputed the page; shared work ran on after its callers left | scenario *intraday requests whose cost limit does not bound*; Go: ` + "`TestEveryRouteCostIsBounded`" + ` (780,000 minutes and 782,800 EOD bars, the most expensive request of each route), ` + "`TestSharedWorkEndsWhenNoCallerWaits`" + `, 422 cases in ` + "`TestIntradayEndToEnd`" + ` | intraday 1min limit=1 5.43 s, offset past the end 11.69 s, offset 700,000 7.36 s; EOD of 100 symbols at offset 700,000 4.14 s; scenario: the 5 req/s key 40 of 40 answered 503, another tenant's uncached EOD 120 of 160 answered, p90 3.0 s | intraday 30–93 ms, EOD deep offsets 0.12–0.38 s; intraday ranges bounded per interval (1min: 7 days … 1hour and longer: 90 days, 422 beyond); scenario figures below |
| 3 | HIGH | lease mode gave the same tokens back after lost replies: healthy replicas served far past the quota | Go: ` + "`TestLostRepliesNeverOverQuota`" + ` (3 replicas, one whose script replies arrive after its timeout while the script runs, lease and exact modes; the counter must equal the requests served), ` + "`TestLeaseCallAppliedOnce`" + ` | quota 3,200: 5,059, 4,815 and 4,986 served | 3,168 in every run, the counter equal to the requests served; every lease and give-back is numbered per replica and key and applied once |
| 4 | MEDIUM | every monthly quota reset when Redis restarted | scenario *Monthly quota across a Redis restart*; Go: ` + "`TestQuotaSurvivesRedisLoss`" + ` (lease and exact), ` + "`TestUsageSyncRun`" + `, ` + "`TestUsageCopyOnlyRises`" + ` | quota 300: 300 served, then 300 more after the restart; scenario: 200 + 300, never refused | usage copied to PostgreSQL every ` + "`MARKETDATA_USAGE_SYNC_INTERVAL`" + ` and reconciled when Redis lost it; Go: 330 of 300 (bound 337); scenario figures below |
| 5 | MEDIUM | the intraday cache key dropped fractional seconds | Go: ` + "`TestIntradayKeyEncodesWhatTheStoreReads`" + `, ` + "`TestEODKeyEncodesWhatTheStoreReads`" + `, ` + "`TestTickerKeyEncodesWhatTheStoreReads`" + ` (20,000 queries each: same key ⇒ the same fields as the store reads them) | one key for two instants a microsecond apart | none: keys write instants to the nanosecond |
| 6 | MEDIUM | data went back in time after Redis was paused during an import | Go: ` + "`TestDataVersionNeverGoesBack`" + ` (3 instances, Redis frozen, an import not announced, Redis back), ` + "`TestVersionNeverGoesBack`" + ` | 30,256–31,595 old answers after new per instance | 0 on each of 3 instances (52–54k answers each) |
| 7 | MEDIUM | a frozen read replica gave 10 s hangs and 503s | Go: ` + "`TestReplicasFailFastOnAFrozenReplica`" + ` (the real replica SIGSTOPped under 24 workers) | 24 of 8,446 reads failed at the request deadline | 0 of 9,205 failed, slowest 1.15 s; ` + "`MARKETDATA_DATABASE_REPLICA_READ_TIMEOUT`" + `, then the primary, and the replica out of rotation with backoff |
| 8 | MEDIUM | answers alternated between old and new while an import waited for its replicas | Go: ` + "`TestReplicasNeverGoBackAVersion`" + ` (one replica's replay paused) | 912 of 1,828 reads old after new | 0 of 2,304 |
| 9a | LOW | a quota 429 reported the rate as spent | Go: ` + "`TestRefusalReportsTheOtherLimit`" + ` (local, exact and lease modes) | lease: 0 left with tokens left; exact: one too few; local: a quota refusal spent a rate token | the true rate state in all three modes; no refusal spends the other limit |
| 9b | LOW | CORS on /metrics and /readyz | Go: ` + "`TestCORSOnAPIRoutesOnly`" + ` (every route of the router), ` + "`TestNoCORSOnAnyRoute`" + ` (notes-svc) | 14 (7 operational routes × GET and preflight) | 0 |
| 9c | LOW | a 1 µs poll interval (and every other absurd duration or count) was accepted | Go: ` + "`TestEverySettingBounded`" + ` (both services: every duration and count field of the config, found by reflection), ` + "`TestBounds`" + ` | marketdata accepted 46 absurd values over its 16 variables, notes-svc 47 | 0: each setting has a documented range and the error names the variable |
| 9d | LOW | cache entries had no size cap | Go: ` + "`TestRedisEntriesBounded`" + ` | a 3,324,891-byte page written to Redis; an entry at the end of its life written with no expiry | over ` + "`MARKETDATA_CACHE_MAX_ENTRY_BYTES`" + ` (1 MiB) served, not written, counted; every key written has a TTL; a Redis without maxmemory is logged at start |
| 9e | LOW | ` + "`keys create`" + ` accepted an empty scope list (all scopes), a name with a newline, an out-of-range rate | Go: ` + "`TestKeysFlagsChecked`" + ` (every flag of every keys subcommand, both services), ` + "`TestKeysListEscapes`" + ` | marketdata 20 of 28 cases reached the database or gave an unclear message, notes-svc 13 of 23 | 0 |
| 9f | LOW | ` + "`access_key%00=<key>`" + ` logged the key | Go: ` + "`TestSimilarNamesRedacted`" + ` (35 spellings × 5 query forms), ` + "`FuzzRedactedQueryKeepsNoSecret`" + `, ` + "`TestNearSpellingsOfTheKeyNotLogged`" + ` (through the access log) | 100 of 175 spellings leaked, and a key hidden in a name; 6 of 8 access-log cases logged the key | 0 |
`
